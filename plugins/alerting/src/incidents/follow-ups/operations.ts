import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { inTransaction, type JobQueue } from '@svc/jobs'
import { trackersAmong } from '../../destinations/index.js'
import { incidentAuditOf, incidentOrNotFound, timelineEntry } from '../common.js'
import type { Actor, SystemActor } from '../operations.js'
import { addTimeline } from '../queries.js'
import { insertFollowUp, type FollowUpRow } from './queries.js'

/** One job per follow-up whose ticket is to be created: `{ organizationId, followUpId }`. */
export const FOLLOW_UP_SYNC_QUEUE = 'alerting.follow-up-sync'

export interface FollowUpSyncJob {
  organizationId: string
  followUpId: string
}

export const followUpBody = (row: FollowUpRow) => ({
  id: row.id,
  incidentId: row.incidentId,
  title: row.title,
  description: row.description,
  status: row.status as 'open' | 'done',
  trackerId: row.trackerId,
  syncStatus: row.syncStatus as 'none' | 'pending' | 'synced' | 'failed',
  syncError: row.syncError,
  ticket:
    row.ticketId && row.ticketKey && row.ticketUrl
      ? { id: row.ticketId, key: row.ticketKey, url: row.ticketUrl, status: row.ticketStatus }
      : null,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

/**
 * Adds a follow-up to the incident, in the caller's transaction; with a tracker (of the
 * organization, else 400), its ticket is created by a job after the transaction commits, so a
 * tracker that is slow or down never holds the incident up. On the timeline and audited.
 */
export async function addFollowUp(
  trx: Executor,
  jobs: JobQueue,
  actor: Actor | SystemActor,
  organizationId: string,
  incidentId: string,
  followUp: { title: string; description: string | null; trackerId: string | null },
): Promise<FollowUpRow> {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  if (followUp.trackerId && !(await trackersAmong(trx, organizationId, [followUp.trackerId])).has(followUp.trackerId))
    throw invalidField('trackerId', 'is not a tracker of the organization')
  const row = await insertFollowUp(trx, {
    organizationId,
    incidentId: incident.id,
    title: followUp.title.trim(),
    description: followUp.description,
    trackerId: followUp.trackerId,
    createdBy: actor.userId,
  })
  if (row.trackerId)
    await jobs.send(FOLLOW_UP_SYNC_QUEUE, { organizationId, followUpId: row.id } satisfies FollowUpSyncJob, {
      db: inTransaction(trx),
      singletonKey: row.id,
    })
  await addTimeline(trx, [
    timelineEntry(organizationId, incident.id, actor.userId, 'follow_up_added', {
      followUpId: row.id,
      title: row.title,
      trackerId: row.trackerId,
    }),
  ])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.follow_up_added',
    after: { followUpId: row.id, title: row.title, trackerId: row.trackerId },
  })
  return row
}
