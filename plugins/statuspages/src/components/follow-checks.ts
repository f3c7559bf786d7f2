import type { FastifyBaseLogger } from 'fastify'
import { sql } from 'kysely'
import type { Database, Executor } from '@svc/db'
import { subscribe, type CheckState, type CheckStateChanged } from '@svc/events'
import { workEach, type JobQueue } from '@svc/jobs'
import type { ComponentStatus } from '../model.js'
import { settleComponents } from '../incidents/effects.js'
import { touchPage } from '../queries/pages.js'

export const CHECK_FOLLOW_QUEUE = 'statuspages.check-follow'

/** What a check's state makes of a component that follows it (OpenStatus' and Checkly's mapping). */
export const componentStatusOfCheck: Record<CheckState, ComponentStatus | null> = {
  failing: 'major_outage',
  degraded: 'degraded_performance',
  passing: null,
  unknown: null,
}

/**
 * Components linked to a synthetic check follow its verdicts: each component keeps every linked
 * check's latest verdict (a verdict older than the one kept is ignored, so a retried event
 * cannot move it back) and takes the worst of them with its incidents and maintenances.
 * Answers the pages whose components changed.
 */
export async function followCheck(db: Executor, event: CheckStateChanged): Promise<string[]> {
  if (event.statusComponentIds.length === 0) return []
  const verdict = JSON.stringify({ [event.checkId]: { status: componentStatusOfCheck[event.state], at: event.at } })
  const updated = await db
    .updateTable('divinux.statusComponents')
    .set({ checkStatuses: sql`check_statuses || ${verdict}::jsonb` })
    .where('organizationId', '=', event.organizationId)
    .where('id', 'in', event.statusComponentIds)
    .where(sql<boolean>`coalesce((check_statuses -> ${event.checkId} ->> 'at')::timestamptz < ${event.at}::timestamptz, true)`)
    .returning(['id', 'pageId'])
    .execute()
  const pages = [...new Set(updated.map((row) => row.pageId))]
  const changed: string[] = []
  for (const pageId of pages) {
    const changes = await settleComponents(
      db,
      pageId,
      updated.filter((row) => row.pageId === pageId).map((row) => row.id),
    )
    if (changes.length > 0) {
      await touchPage(db, pageId)
      changed.push(pageId)
    }
  }
  return changed
}

export async function startFollowingChecks(deps: {
  database: Database
  jobs: JobQueue
  changed: (pageId: string) => void
  log: FastifyBaseLogger
}) {
  await subscribe(deps.jobs, 'check.state_changed', CHECK_FOLLOW_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true })
  await workEach<CheckStateChanged>(deps.jobs, CHECK_FOLLOW_QUEUE, { batchSize: 10, pollingIntervalSeconds: 1 }, async (job) => {
    const changed = await deps.database.db.transaction().execute((trx) => followCheck(trx, job.data))
    for (const pageId of changed) deps.changed(pageId)
    if (changed.length > 0)
      deps.log.info({ checkId: job.data.checkId, state: job.data.state, pages: changed.length }, 'status page components follow the check')
  })
}
