import type { FastifyBaseLogger } from 'fastify'
import { recordAudit } from '@svc/audit'
import type { Database } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'
import { deleteReportsCreatedBefore } from '../queries/reports.js'
import { deletedReportAudit } from './model.js'

export const REPORT_RETENTION_QUEUE = 'reports.retention'
/** Reports deleted, with their files and audit entries, per transaction. */
const BATCH = 100

/**
 * REPORTS_RETENTION_DAYS: every hour, reports asked for longer ago than that are deleted with
 * their files, each with an audit entry `expired` by the system. Without it nothing is scheduled
 * (and a schedule left from an earlier configuration is removed): reports stay until deleted.
 */
export function createReportRetention(deps: { database: Database; jobs: JobQueue; retentionDays?: number; log: FastifyBaseLogger }) {
  const { database, jobs, retentionDays, log } = deps

  /** Deletes what is past retention at `now`; answers how many reports went. */
  async function removeExpired(now = new Date()): Promise<number> {
    if (!retentionDays) return 0
    const before = new Date(now.getTime() - retentionDays * 86_400_000)
    let removed = 0
    for (;;) {
      const batch = await database.db.transaction().execute(async (trx) => {
        const deleted = await deleteReportsCreatedBefore(trx, before, BATCH)
        for (const report of deleted) await recordAudit(trx, { actor: { type: 'system' } }, deletedReportAudit(report, 'expired'))
        return deleted.length
      })
      removed += batch
      if (batch < BATCH) break
    }
    if (removed > 0) log.info({ removed, retentionDays }, 'reports past retention deleted')
    return removed
  }

  return {
    async start(): Promise<void> {
      await ensureQueue(jobs, REPORT_RETENTION_QUEUE, { retryLimit: 1, expireInSeconds: 900 })
      if (!retentionDays) {
        await jobs.unschedule(REPORT_RETENTION_QUEUE)
        return
      }
      await jobs.work(REPORT_RETENTION_QUEUE, { pollingIntervalSeconds: 2 }, async () => {
        await removeExpired()
      })
      await jobs.schedule(REPORT_RETENTION_QUEUE, '23 * * * *')
    },
    async stop(): Promise<void> {
      await jobs.offWork(REPORT_RETENTION_QUEUE)
    },
  }
}
