import { AnalyzerError, type SpendGuard } from '@svc/ai'
import type { AiConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { insertReservation, lockBudget, lockInstallationSpend, periodOf, settleReservation, usageIn } from '../queries/usage.js'
import { costOf, effectiveLimits } from './budget.js'

/** A reservation outlives a call only while its job may still be running (the AI job expiry). */
const RESERVATION_TTL_SECONDS = 15 * 60

/**
 * The budget's side of a model call (decision 0012, "AI spend"): before each call, with the
 * organization's budget locked, the most the call can cost is reserved if the limits, counting
 * the ledger and every reservation of calls under way, leave room for it; otherwise the call is
 * refused and never made. After the call the reservation is brought down to what it cost, and
 * the job's ledger entry ends it. So a burst of analyses cannot spend past a limit together.
 * The installation's ceiling, when set, is checked the same way over every organization's spend.
 */
export function createSpendGuard(database: Database, ai: AiConfig, job: { organizationId: string; referenceId: string }): SpendGuard {
  const { organizationId, referenceId } = job
  return {
    async reserve(estimate) {
      const tokens = estimate.promptTokens + estimate.completionTokens
      const costUsd = costOf(ai, estimate)
      const id = await database.db.transaction().execute(async (trx) => {
        const limits = effectiveLimits(await lockBudget(trx, organizationId), ai)
        const usage = await usageIn(trx, organizationId, periodOf(new Date()))
        const tokensUsed = usage.promptTokens + usage.completionTokens + usage.reservedTokens
        if (limits.monthlyTokenLimit !== null && tokensUsed + tokens > Number(limits.monthlyTokenLimit)) {
          throw new AnalyzerError(
            `the organization's monthly AI token limit (${limits.monthlyTokenLimit}) leaves no room for this model call`,
            false,
          )
        }
        if (limits.monthlyCostLimitUsd !== null && usage.costUsd + usage.reservedCostUsd + costUsd > Number(limits.monthlyCostLimitUsd)) {
          throw new AnalyzerError(
            `the organization's monthly AI cost limit ($${limits.monthlyCostLimitUsd}) leaves no room for this model call`,
            false,
          )
        }
        // No combination of organizations passes the installation's ceiling (AI_MONTHLY_CEILING_USD).
        if (
          ai.monthlyCeilingUsd !== undefined &&
          (await lockInstallationSpend(trx, periodOf(new Date()))) + costUsd > ai.monthlyCeilingUsd
        ) {
          throw new AnalyzerError(
            `this installation's monthly AI ceiling ($${ai.monthlyCeilingUsd}, all organizations together) leaves no room for this model call`,
            false,
          )
        }
        return insertReservation(trx, { organizationId, referenceId, tokens, costUsd, ttlSeconds: RESERVATION_TTL_SECONDS })
      })
      return {
        async settle(actual) {
          await settleReservation(database.db, organizationId, id, {
            tokens: actual.promptTokens + actual.completionTokens,
            costUsd: costOf(ai, actual),
          })
        },
      }
    },
  }
}
