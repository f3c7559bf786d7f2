import { sql } from 'kysely'
import { dropMonthlyPartitionsBefore, ensureMonthlyPartitions, type Database, type PartitionedTable } from '@svc/db'

export const ANALYTICS_EVENTS: PartitionedTable = { table: 'core.analytics_events' }

const DAY_MS = 86_400_000
/** Months created ahead of today, so a write never meets a missing partition between two runs. */
const AHEAD_DAYS = 62
/** Summary rows deleted per statement: short transactions, however much is due. */
const SUMMARY_BATCH = 5_000

export interface AnalyticsRetention {
  /** Raw events, dropped by the month. */
  analyticsEvents: number
  /** Daily summaries. */
  analyticsSummaries: number
}

async function deleteInBatches(
  database: Database,
  table: 'core.analytics_daily' | 'core.analytics_daily_users',
  before: string,
): Promise<number> {
  let removed = 0
  for (;;) {
    const { numAffectedRows } = await sql`
      delete from ${sql.raw(table)} where ctid = any(array(
        select ctid from ${sql.raw(table)} where day < ${before}::date limit ${SUMMARY_BATCH}))`.execute(database.db)
    const count = Number(numAffectedRows ?? 0)
    removed += count
    if (count < SUMMARY_BATCH) return removed
  }
}

/**
 * Keeps analytics storage bounded at `now`: the partitions from the retention's start to two
 * months ahead exist; months wholly past retention are dropped; summaries past theirs deleted.
 */
export async function maintainAnalytics(database: Database, retention: AnalyticsRetention, now = new Date()) {
  const oldest = new Date(now.getTime() - retention.analyticsEvents * DAY_MS)
  const created = await ensureMonthlyPartitions(ANALYTICS_EVENTS, database.db, oldest, new Date(now.getTime() + AHEAD_DAYS * DAY_MS))
  const dropped = await dropMonthlyPartitionsBefore(ANALYTICS_EVENTS, database.db, oldest)
  const summariesBefore = new Date(now.getTime() - retention.analyticsSummaries * DAY_MS).toISOString().slice(0, 10)
  const summariesRemoved =
    (await deleteInBatches(database, 'core.analytics_daily', summariesBefore)) +
    (await deleteInBatches(database, 'core.analytics_daily_users', summariesBefore))
  return { created, dropped, summariesRemoved }
}
