import { sql } from 'kysely'
import { lockUntilCommit, type Executor, type Json, type Page, paged } from '@svc/db'

/** A budget period: the calendar month (UTC) that holds `at`. */
export interface Period {
  start: Date
  end: Date
}

export function periodOf(at: Date): Period {
  return {
    start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)),
    end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)),
  }
}

export type BudgetRow = NonNullable<Awaited<ReturnType<typeof findBudget>>>

const budgetColumns = [
  'monthlyAnalysisLimit',
  'monthlyTokenLimit',
  'monthlyCostLimitUsd',
  'alertThresholds',
  'updatedAt',
  'updatedBy',
] as const

export async function findBudget(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.tenantBudgets').select(budgetColumns).where('organizationId', '=', organizationId).executeTakeFirst()
}

/**
 * The budget, with the organization's budget lock held until the caller's transaction ends:
 * everything that counts against it takes turns, whether or not the organization has a row
 * (the default caps apply without one), hence a transaction-scoped advisory lock.
 */
export async function lockBudget(db: Executor, organizationId: string) {
  await lockUntilCommit(db, `ai-budget:${organizationId}`)
  return findBudget(db, organizationId)
}

export async function saveBudget(
  db: Executor,
  organizationId: string,
  changes: {
    monthlyAnalysisLimit?: number | null
    monthlyTokenLimit?: number | null
    monthlyCostLimitUsd?: number | null
    alertThresholds?: number[]
  },
  userId: string,
) {
  const values = { ...changes, updatedBy: userId, updatedAt: sql<Date>`now()` }
  return db
    .insertInto('divinux.tenantBudgets')
    .values({ organizationId, ...values })
    .onConflict((oc) => oc.column('organizationId').doUpdateSet(values))
    .returning(budgetColumns)
    .executeTakeFirstOrThrow()
}

export interface PeriodUsage {
  analyses: number
  promptTokens: number
  completionTokens: number
  costUsd: number
  /** Reserved for model calls under way and not yet on the ledger. */
  reservedTokens: number
  reservedCostUsd: number
}

/** What the organization consumed in the period: analyses requested, and the model calls' ledger. */
export async function usageIn(db: Executor, organizationId: string, period: Period): Promise<PeriodUsage> {
  const row = await sql<{
    analyses: number
    promptTokens: number
    completionTokens: number
    costUsd: string
    reservedTokens: string
    reservedCostUsd: string
  }>`
    select
      (select count(*) from divinux.analyses
        where organization_id = ${organizationId} and created_at >= ${period.start} and created_at < ${period.end})::int as analyses,
      coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
      coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
      coalesce(sum(cost_usd), 0) as cost_usd,
      (select coalesce(sum(tokens), 0) from divinux.ai_reservations where organization_id = ${organizationId} and expires_at > now())::bigint as reserved_tokens,
      (select coalesce(sum(cost_usd), 0) from divinux.ai_reservations where organization_id = ${organizationId} and expires_at > now()) as reserved_cost_usd
    from divinux.ai_usage
    where organization_id = ${organizationId} and created_at >= ${period.start} and created_at < ${period.end}`.execute(db)
  const usage = row.rows[0]
  return {
    analyses: Number(usage?.analyses ?? 0),
    promptTokens: Number(usage?.promptTokens ?? 0),
    completionTokens: Number(usage?.completionTokens ?? 0),
    costUsd: Number(usage?.costUsd ?? 0),
    reservedTokens: Number(usage?.reservedTokens ?? 0),
    reservedCostUsd: Number(usage?.reservedCostUsd ?? 0),
  }
}

/**
 * What every organization together spent on models in the period, with calls under way, for the
 * installation's ceiling; reservations of all organizations are serialized until the caller's
 * transaction ends, so the ceiling holds when many organizations call at once.
 */
export async function lockInstallationSpend(db: Executor, period: Period): Promise<number> {
  await lockUntilCommit(db, 'ai-installation-ceiling')
  const row = await sql<{ spent: string }>`
    select
      (select coalesce(sum(cost_usd), 0) from divinux.ai_usage where created_at >= ${period.start} and created_at < ${period.end})
      + (select coalesce(sum(cost_usd), 0) from divinux.ai_reservations where expires_at > now()) as spent`.execute(db)
  return Number(row.rows[0]?.spent ?? 0)
}

export async function recordAiUsage(
  db: Executor,
  usage: {
    organizationId: string
    feature: 'analysis' | 'rca_draft'
    referenceId: string
    provider: string
    model: string
    promptTokens: number
    completionTokens: number
    costUsd: number
  },
): Promise<void> {
  await db.insertInto('divinux.aiUsage').values(usage).execute()
}

/**
 * Records each threshold crossed for the first time this period; answers the ones new now. The
 * partial index's predicate is a literal (see `ACTIVE_PREDICATE` in analyses.ts for why).
 */
export async function recordThresholdsCrossed(
  db: Executor,
  organizationId: string,
  period: Period,
  thresholds: number[],
  data: Json,
): Promise<number[]> {
  if (thresholds.length === 0) return []
  const rows = await db
    .insertInto('divinux.usageEvents')
    .values(thresholds.map((threshold) => ({ organizationId, periodStart: period.start, type: 'threshold_crossed', threshold, data })))
    .onConflict((oc) =>
      oc.columns(['organizationId', 'periodStart', 'threshold']).where('type', '=', sql.lit('threshold_crossed')).doNothing(),
    )
    .returning('threshold')
    .execute()
  return rows.map((row) => row.threshold ?? 0)
}

export async function recordAnalysisSkipped(db: Executor, organizationId: string, period: Period, data: Json): Promise<void> {
  await db.insertInto('divinux.usageEvents').values({ organizationId, periodStart: period.start, type: 'analysis_skipped', data }).execute()
}

/** A page of the period's usage events, oldest first, with their number. */
export async function usageEventsIn(db: Executor, organizationId: string, period: Period, page: Page) {
  const query = db.selectFrom('divinux.usageEvents').where('organizationId', '=', organizationId).where('periodStart', '=', period.start)
  return paged(query, (rows) => rows.select(['id', 'type', 'threshold', 'data', 'createdAt']).orderBy('createdAt').orderBy('id'), page)
}

/** Room held in the budget for one model call (see usage/spend-guard.ts). */
export async function insertReservation(
  db: Executor,
  reservation: { organizationId: string; referenceId: string; tokens: number; costUsd: number; ttlSeconds: number },
) {
  const { ttlSeconds, ...values } = reservation
  const row = await db
    .insertInto('divinux.aiReservations')
    .values({ ...values, expiresAt: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/** A reservation brought down to what its call really cost. */
export async function settleReservation(
  db: Executor,
  organizationId: string,
  id: string,
  actual: { tokens: number; costUsd: number },
): Promise<void> {
  await db.updateTable('divinux.aiReservations').set(actual).where('organizationId', '=', organizationId).where('id', '=', id).execute()
}

/** Ends a job's reservations, in the transaction that puts its spend on the ledger. */
export async function releaseReservations(db: Executor, organizationId: string, referenceId: string): Promise<void> {
  await db
    .deleteFrom('divinux.aiReservations')
    .where('organizationId', '=', organizationId)
    .where('referenceId', '=', referenceId)
    .execute()
}
