import type { FastifyBaseLogger } from 'fastify'
import { maintainAnalytics } from '@svc/analytics'
import { maintainUserActivities } from '@svc/auth'
import type { RetentionConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'

export const STORAGE_MAINTENANCE_QUEUE = 'storage.maintenance'

/**
 * The partitioned tables' upkeep (decision 0022): months ahead created, months past retention
 * dropped, old summaries deleted. Run when a service starts (before it takes requests, so the
 * months it writes into exist) and daily at 03:17 UTC through pg-boss, on whichever replica takes
 * the job. Both services write into these tables, so both run it; the partition helper's lock
 * makes two at once harmless.
 */
export function createStorageMaintenance(deps: { database: Database; jobs: JobQueue; retention: RetentionConfig; log: FastifyBaseLogger }) {
  const { database, jobs, retention, log } = deps
  const run = async (now = new Date()) => {
    const analytics = await maintainAnalytics(database, retention, now)
    const activities = await maintainUserActivities(database.db, retention.userActivities, now)
    const changed = [analytics.created, analytics.dropped, activities.created, activities.dropped].some((list) => list.length > 0)
    if (changed || analytics.summariesRemoved) log.info({ analytics, activities, retention }, 'partitions and summaries maintained')
    return { analytics, activities }
  }
  return {
    run,
    async start(): Promise<void> {
      await run()
      await ensureQueue(jobs, STORAGE_MAINTENANCE_QUEUE, { retryLimit: 2, retryDelay: 60, expireInSeconds: 900 })
      await jobs.work(STORAGE_MAINTENANCE_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
        await run()
      })
      await jobs.schedule(STORAGE_MAINTENANCE_QUEUE, '17 3 * * *')
    },
  }
}
