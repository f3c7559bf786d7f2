import { sql } from 'kysely'
import { dropMonthlyPartitionsBefore, ensureMonthlyPartitions, type Database, type PartitionedTable } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'

export const ANALYTICS_EVENTS: PartitionedTable = { table: 'core.analytics_events' }
export const ANALYTICS_MAINTENANCE_QUEUE = 'analytics.maintenance'

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

/**
 * Runs `maintainAnalytics` when the service starts (before it takes requests, so the months it
 * writes into exist) and then daily through pg-boss, on whichever replica takes the job.
 */
export function createAnalyticsMaintenance(deps: {
  database: Database
  jobs: JobQueue
  retention: AnalyticsRetention
  log: { info(details: object, message: string): void }
}) {
  const { database, jobs, retention, log } = deps
  const run = async (now = new Date()) => {
    const outcome = await maintainAnalytics(database, retention, now)
    if (outcome.created.length || outcome.dropped.length || outcome.summariesRemoved)
      log.info({ ...outcome, retention }, 'analytics partitions and summaries maintained')
    return outcome
  }
  return {
    run,
    async start(): Promise<void> {
      await run()
      await ensureQueue(jobs, ANALYTICS_MAINTENANCE_QUEUE, { retryLimit: 2, retryDelay: 60, expireInSeconds: 900 })
      await jobs.work(ANALYTICS_MAINTENANCE_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
        await run()
      })
      await jobs.schedule(ANALYTICS_MAINTENANCE_QUEUE, '17 3 * * *')
    },
    async stop(): Promise<void> {
      await jobs.offWork(ANALYTICS_MAINTENANCE_QUEUE)
    },
  }
}
