import type { Executor } from '@svc/db'
import { lockBudget, periodOf, recordThresholdsCrossed, usageIn, type BudgetRow, type Period, type PeriodUsage } from '../queries/usage.js'

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
