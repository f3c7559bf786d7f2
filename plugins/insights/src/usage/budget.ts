import type { TokenUsage } from '@svc/ai'
import type { AiConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import {
  findBudget,
  lockBudget,
  periodOf,
  recordAiUsage,
  recordThresholdsCrossed,
  releaseReservations,
  usageIn,
  type BudgetRow,
  type Period,
  type PeriodUsage,
} from '../queries/usage.js'

export type LimitName = 'analyses' | 'tokens' | 'cost'

/** The limits that apply: the organization's own, else the default caps, and its alert thresholds. */
export type Limits = Pick<BudgetRow, 'monthlyAnalysisLimit' | 'monthlyTokenLimit' | 'monthlyCostLimitUsd' | 'alertThresholds'>

export const DEFAULT_THRESHOLDS = [50, 80, 100]

/**
 * The organization's limits with the default monthly caps (AI_DEFAULT_MONTHLY_TOKENS,
 * AI_DEFAULT_MONTHLY_COST_USD) in place of the ones it did not set: AI spend has a ceiling even
 * for an organization that never looked at its budget (decision 0012).
 */
export function effectiveLimits(budget: BudgetRow | undefined, ai: AiConfig): Limits {
  return {
    monthlyAnalysisLimit: budget?.monthlyAnalysisLimit ?? null,
    monthlyTokenLimit: budget?.monthlyTokenLimit ?? ai.defaultMonthlyLimits.tokens,
    monthlyCostLimitUsd: budget?.monthlyCostLimitUsd ?? String(ai.defaultMonthlyLimits.costUsd),
    alertThresholds: budget?.alertThresholds ?? DEFAULT_THRESHOLDS,
  }
}

/**
 * How much of each set limit is used, in percent (a limit of 0 is used up at once). Tokens and
 * cost count what model calls under way have reserved too.
 */
export function percentages(budget: Limits | undefined, usage: PeriodUsage): Partial<Record<LimitName, number>> {
  const percent = (used: number, limit: number | string | null | undefined) => {
    if (limit === null || limit === undefined) return undefined
    const ceiling = Number(limit)
    return ceiling === 0 ? 100 : (used / ceiling) * 100
  }
  const result: Partial<Record<LimitName, number>> = {}
  const analyses = percent(usage.analyses, budget?.monthlyAnalysisLimit)
  const tokens = percent(usage.promptTokens + usage.completionTokens + usage.reservedTokens, budget?.monthlyTokenLimit)
  const cost = percent(usage.costUsd + usage.reservedCostUsd, budget?.monthlyCostLimitUsd)
  if (analyses !== undefined) result.analyses = analyses
  if (tokens !== undefined) result.tokens = tokens
  if (cost !== undefined) result.cost = cost
  return result
}

/** The limit reached (used at or past 100 %), if any: no more analyses this period. */
export function limitReached(budget: Limits | undefined, usage: PeriodUsage): LimitName | undefined {
  const used = percentages(budget, usage)
  return (['analyses', 'tokens', 'cost'] as const).find((name) => (used[name] ?? 0) >= 100)
}

/**
 * After usage grew (or limits changed): records every threshold now crossed that was not yet
 * recorded this period. The unique index makes "once per period" hold under concurrency.
 */
export async function noteThresholds(db: Executor, organizationId: string, budget: Limits, now = new Date()): Promise<number[]> {
  if (budget.alertThresholds.length === 0) return []
  const period: Period = periodOf(now)
  const usage = await usageIn(db, organizationId, period)
  const used = percentages(budget, usage)
  const highest = Math.max(0, ...Object.values(used))
  const crossed = budget.alertThresholds.filter((threshold) => highest >= threshold)
  const limits = Object.fromEntries(Object.entries(used).map(([name, percent]) => [name, Math.round(percent * 100) / 100]))
  return recordThresholdsCrossed(db, organizationId, period, crossed, { percentUsed: limits })
}

/** The limit reached this period, judged with the budget locked until the caller's transaction ends. */
export async function limitReachedNow(db: Executor, ai: AiConfig, organizationId: string): Promise<LimitName | undefined> {
  const limits = effectiveLimits(await lockBudget(db, organizationId), ai)
  return limitReached(limits, await usageIn(db, organizationId, periodOf(new Date())))
}

/** US dollars for the tokens, at the configured prices per million. */
export function costOf(ai: AiConfig, usage: { promptTokens: number; completionTokens: number }): number {
  const { input, output } = ai.pricePerMillionTokens
  return (usage.promptTokens * input + usage.completionTokens * output) / 1_000_000
}

/**
 * Puts a job's model calls on the ledger, priced, ends the reservations they held, and records
 * the thresholds that spending crossed.
 */
export async function recordSpend(
  db: Executor,
  ai: AiConfig,
  spend: { organizationId: string; feature: 'analysis' | 'rca_draft'; referenceId: string; usage: TokenUsage },
): Promise<void> {
  const { organizationId, feature, referenceId, usage } = spend
  const { provider, model, promptTokens, completionTokens } = usage
  await releaseReservations(db, organizationId, referenceId)
  await recordAiUsage(db, {
    organizationId,
    feature,
    referenceId,
    provider,
    model,
    promptTokens,
    completionTokens,
    costUsd: costOf(ai, usage),
  })
  await noteThresholds(db, organizationId, effectiveLimits(await findBudget(db, organizationId), ai))
}
