import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { ConflictError, invalidField } from '@svc/http'
import { inTransaction, type JobQueue } from '@svc/jobs'
import { trackersAmong } from '../../destinations/index.js'
import { incidentAuditOf, incidentOrNotFound, timelineEntry } from '../common.js'
import type { Actor, SystemActor } from '../operations.js'
import { addTimeline } from '../queries.js'
import { followUpsOfActionItems, insertFollowUp, type FollowUpRow } from './queries.js'

/** One job per follow-up whose ticket is to be created: `{ organizationId, followUpId }`. */
export const FOLLOW_UP_SYNC_QUEUE = 'alerting.follow-up-sync'

export interface FollowUpSyncJob {
  organizationId: string
  followUpId: string
}

/** A follow-up of the incident, as its routes answer it. */
export const followUpBody = (row: FollowUpRow, incidentId: string) => ({
  id: row.id,
  incidentId,
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

/**
 * Opens the ticket of an RCA action item (decision 0031, "Action items as tickets"): a follow-up
 * of no incident, in the caller's transaction, its ticket created by the same job as an
 * incident's; audited against the item. 400 when the tracker is not the organization's, 409 when
 * the item has its ticket already.
 */
export async function openActionItemTicket(
  trx: Executor,
  jobs: JobQueue,
  actor: Actor,
  organizationId: string,
  item: { id: string; title: string; description: string | null; rca: { title: string; url: string } },
  trackerId: string,
): Promise<FollowUpRow> {
  if (!(await trackersAmong(trx, organizationId, [trackerId])).has(trackerId))
    throw invalidField('trackerId', 'is not a tracker of the organization')
  if ((await followUpsOfActionItems(trx, organizationId, [item.id])).length > 0)
    throw new ConflictError('the action item has its ticket already')
  const row = await insertFollowUp(trx, {
    organizationId,
    incidentId: null,
    rcaActionItemId: item.id,
    title: item.title.trim(),
    description: [item.description ?? '', `Action item of the RCA "${item.rca.title}"`, item.rca.url].filter(Boolean).join('\n'),
    trackerId,
    createdBy: actor.userId,
  })
  await jobs.send(FOLLOW_UP_SYNC_QUEUE, { organizationId, followUpId: row.id } satisfies FollowUpSyncJob, {
    db: inTransaction(trx),
    singletonKey: row.id,
  })
  await recordAudit(trx, actor.audit, {
    organizationId,
    product: 'insights',
    entityType: 'rca_action_item',
    entityId: item.id,
    action: 'rca_action_item.ticket_requested',
    after: { followUpId: row.id, trackerId },
  })
  return row
}

/** The tickets of RCA action items as the insights surface shows them on each item, by item id. */
export async function actionItemTickets(db: Executor, organizationId: string, itemIds: string[]) {
  const rows = await followUpsOfActionItems(db, organizationId, itemIds)
  return new Map(
    rows.map((row) => [
      row.rcaActionItemId,
      {
        trackerId: row.trackerId,
        syncStatus: row.syncStatus as 'none' | 'pending' | 'synced' | 'failed',
        syncError: row.syncError,
        key: row.ticketKey,
        url: row.ticketUrl,
        status: row.ticketStatus,
      },
    ]),
  )
}
