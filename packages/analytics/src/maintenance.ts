import { sql } from 'kysely'
import { deleteInBatches, dropMonthlyPartitionsBefore, ensureMonthlyPartitions, type Database, type PartitionedTable } from '@svc/db'

export const ANALYTICS_EVENTS: PartitionedTable = { table: 'core.analytics_events' }

const DAY_MS = 86_400_000
/** Months created ahead of today, so a write never meets a missing partition between two runs. */
const AHEAD_DAYS = 62

export interface AnalyticsRetention {
  /** Raw events, dropped by the month. */
  analyticsEvents: number
  /** Daily summaries. */
  analyticsSummaries: number
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
    (await deleteInBatches(database.db, 'core.analytics_daily', sql`day < ${summariesBefore}::date`)) +
    (await deleteInBatches(database.db, 'core.analytics_daily_users', sql`day < ${summariesBefore}::date`))
  return { created, dropped, summariesRemoved }
}
