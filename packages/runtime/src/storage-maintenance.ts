import type { FastifyBaseLogger } from 'fastify'
import { maintainAnalytics } from '@svc/analytics'
import { maintainUserActivities } from '@svc/auth'
import type { RetentionConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'

export const STORAGE_MAINTENANCE_QUEUE = 'storage.maintenance'

/**
 * A daily job through pg-boss, run on whichever replica takes it: `run(now)` answers what it did
 * (counts, or lists of partitions), logged when any of it is non-empty.
 */
export function createDailyMaintenance(deps: {
  queue: string
  /** Cron in UTC. */
  cron: string
  jobs: JobQueue
  log: FastifyBaseLogger
  run: (now: Date) => Promise<Record<string, number | string[]>>
  /** Also once when the service starts, before it takes requests. */
  atStart?: boolean
}) {
  const { queue, cron, jobs, log } = deps
  const run = async (now = new Date()) => {
    const outcome = await deps.run(now)
    const changed = Object.values(outcome).some((value) => (Array.isArray(value) ? value.length > 0 : value > 0))
    if (changed) log.info({ queue, ...outcome }, 'storage kept within retention')
    return outcome
  }
  return {
    run,
    async start(): Promise<void> {
      if (deps.atStart) await run()
      await ensureQueue(jobs, queue, { retryLimit: 2, retryDelay: 60, expireInSeconds: 1_800 })
      await jobs.work(queue, { pollingIntervalSeconds: 5 }, async () => {
        await run()
      })
      await jobs.schedule(queue, cron)
    },
  }
}

/**
 * The partitioned tables both services write (analytics events, user activity; decision 0022):
 * months ahead created, months past retention dropped, old summaries deleted, when a service
 * starts (so the months it writes into exist) and daily at 03:17 UTC. The partition helper's lock
 * makes two services at once harmless.
 */
export function createStorageMaintenance(deps: { database: Database; jobs: JobQueue; retention: RetentionConfig; log: FastifyBaseLogger }) {
  const { database, retention } = deps
  return createDailyMaintenance({
    queue: STORAGE_MAINTENANCE_QUEUE,
    cron: '17 3 * * *',
    jobs: deps.jobs,
    log: deps.log,
    atStart: true,
    run: async (now) => {
      const analytics = await maintainAnalytics(database, retention, now)
      const activities = await maintainUserActivities(database.db, retention.userActivities, now)
      return {
        analyticsPartitionsCreated: analytics.created,
        analyticsPartitionsDropped: analytics.dropped,
        analyticsSummariesRemoved: analytics.summariesRemoved,
        activityPartitionsCreated: activities.created,
        activityPartitionsDropped: activities.dropped,
      }
    },
  })
}
