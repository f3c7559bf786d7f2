import type { TokenUsage } from '@svc/ai'
import type { AiConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import { findBudget, lockBudget, periodOf, recordAiUsage, recordThresholdsCrossed, usageIn, type BudgetRow, type Period, type PeriodUsage } from '../queries/usage.js'

export type LimitName = 'analyses' | 'tokens' | 'cost'

/** How much of each set limit is used, in percent (a limit of 0 is used up at once). */
export function percentages(budget: BudgetRow | undefined, usage: PeriodUsage): Partial<Record<LimitName, number>> {
  const percent = (used: number, limit: number | string | null | undefined) => {
    if (limit === null || limit === undefined) return undefined
    const ceiling = Number(limit)
    return ceiling === 0 ? 100 : (used / ceiling) * 100
  }
  const result: Partial<Record<LimitName, number>> = {}
  const analyses = percent(usage.analyses, budget?.monthlyAnalysisLimit)
  const tokens = percent(usage.promptTokens + usage.completionTokens, budget?.monthlyTokenLimit)
  const cost = percent(usage.costUsd, budget?.monthlyCostLimitUsd)
  if (analyses !== undefined) result.analyses = analyses
  if (tokens !== undefined) result.tokens = tokens
  if (cost !== undefined) result.cost = cost
  return result
}

/** The limit reached (used at or past 100 %), if any: no more analyses this period. */
export function limitReached(budget: BudgetRow | undefined, usage: PeriodUsage): LimitName | undefined {
  const used = percentages(budget, usage)
  return (['analyses', 'tokens', 'cost'] as const).find((name) => (used[name] ?? 0) >= 100)
}

/**
 * After usage grew (or limits changed): records every threshold now crossed that was not yet
 * recorded this period. The unique index makes "once per period" hold under concurrency.
 */
export async function noteThresholds(db: Executor, organizationId: string, budget: BudgetRow | undefined, now = new Date()): Promise<number[]> {
  if (!budget || budget.alertThresholds.length === 0) return []
  const period: Period = periodOf(now)
  const usage = await usageIn(db, organizationId, period)
  const used = percentages(budget, usage)
  const highest = Math.max(0, ...Object.values(used))
  const crossed = budget.alertThresholds.filter((threshold) => highest >= threshold)
  const limits = Object.fromEntries(Object.entries(used).map(([name, percent]) => [name, Math.round(percent * 100) / 100]))
  return recordThresholdsCrossed(db, organizationId, period, crossed, { percentUsed: limits })
}

/** The limit reached this period, judged with the budget row locked until the caller's transaction ends. */
export async function limitReachedNow(db: Executor, organizationId: string): Promise<LimitName | undefined> {
  const budget = await lockBudget(db, organizationId)
  if (!budget) return undefined
  return limitReached(budget, await usageIn(db, organizationId, periodOf(new Date())))
}

/** US dollars for the tokens, at the configured prices per million. */
export function costOf(ai: AiConfig, usage: { promptTokens: number; completionTokens: number }): number {
  const { input, output } = ai.pricePerMillionTokens
  return (usage.promptTokens * input + usage.completionTokens * output) / 1_000_000
}

/** Puts one model call on the ledger, priced, and records the thresholds that spending crossed. */
export async function recordSpend(
  db: Executor,
  ai: AiConfig,
  spend: { organizationId: string; feature: 'analysis' | 'rca_draft'; referenceId: string; usage: TokenUsage },
): Promise<void> {
  const { organizationId, feature, referenceId, usage } = spend
  const { provider, model, promptTokens, completionTokens } = usage
  await recordAiUsage(db, { organizationId, feature, referenceId, provider, model, promptTokens, completionTokens, costUsd: costOf(ai, usage) })
  await noteThresholds(db, organizationId, await findBudget(db, organizationId))
}
