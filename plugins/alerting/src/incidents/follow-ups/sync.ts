import type { FastifyBaseLogger } from 'fastify'
import type { SecretSealer } from '@svc/config'
import type { Database } from '@svc/db'
import { ensureQueue, workEach, type JobQueue } from '@svc/jobs'
import { findTracker, openTrackerValue, type TrackerClient, TrackerFailure } from '../../destinations/index.js'
import { timelineEntry } from '../common.js'
import { addTimeline, findIncident } from '../queries.js'
import { FOLLOW_UP_SYNC_QUEUE, type FollowUpSyncJob } from './operations.js'
import { findFollowUp, updateFollowUp } from './queries.js'

/** Tries of a ticket's creation beyond the first, with backoff (10 s, 20 s, 40 s…): about ten minutes in all. */
const RETRY_LIMIT = 6

export interface FollowUpSyncDeps {
  database: Database
  jobs: JobQueue
  log: FastifyBaseLogger
  trackers: TrackerClient
  sealer: SecretSealer
  productUrl: string
}

/**
 * Creates follow-ups' tickets (an incident's, or an RCA action item's) in their trackers, one pg-boss job each, outside any transaction
 * (the call to the tracker may take seconds). What the tracker answers when it does not create
 * the ticket is kept on the follow-up (`syncError`) and the job is tried again; after the last
 * try the follow-up is `failed`. A ticket created whose recording then failed may be created
 * again on the next try: the tracker's answer is recorded first thing after it comes.
 */
export function createFollowUpSync(deps: FollowUpSyncDeps) {
  const { database, jobs, log } = deps
  const { db } = database

  async function sync(job: FollowUpSyncJob, retryCount: number): Promise<void> {
    const { organizationId, followUpId } = job
    const followUp = await findFollowUp(db, organizationId, followUpId)
    if (!followUp || followUp.syncStatus !== 'pending' || !followUp.trackerId) return
    const fail = async (error: string) =>
      void (await updateFollowUp(db, organizationId, followUp.id, { syncStatus: 'failed', syncError: error }))
    const tracker = await findTracker(db, organizationId, followUp.trackerId)
    if (!tracker) return fail('the tracker was disconnected')
    if (!tracker.enabled) return fail(`the tracker "${tracker.name}" is disabled`)
    // An RCA action item's ticket carries its RCA in its description already.
    const incident = followUp.incidentId ? await findIncident(db, organizationId, followUp.incidentId) : undefined
    const about = incident
      ? [
          `Follow-up of INC-${incident.number}: ${incident.title}`,
          `${deps.productUrl}/api/v1/organizations/${organizationId}/incidents/${incident.id}`,
        ]
      : []
    try {
      const ticket = await deps.trackers.createTicket(
        {
          kind: tracker.kind as 'jira' | 'linear',
          siteUrl: tracker.siteUrl,
          accountEmail: tracker.accountEmail,
          project: tracker.project,
          issueType: tracker.issueType,
          credential: openTrackerValue(deps.sealer, organizationId, tracker.id, 'credential', tracker.credential),
        },
        {
          title: followUp.title,
          description: [followUp.description ?? '', ...about].join('\n'),
        },
      )
      await db.transaction().execute(async (trx) => {
        await updateFollowUp(trx, organizationId, followUp.id, {
          syncStatus: 'synced',
          syncError: null,
          ticketId: ticket.id,
          ticketKey: ticket.key,
          ticketUrl: ticket.url,
          ...(ticket.status ? { ticketStatus: ticket.status } : {}),
        })
        if (followUp.incidentId)
          await addTimeline(trx, [
            timelineEntry(organizationId, followUp.incidentId, null, 'follow_up_updated', {
              followUpId: followUp.id,
              ticket: ticket.key,
              url: ticket.url,
              status: ticket.status,
            }),
          ])
      })
    } catch (error) {
      if (!(error instanceof TrackerFailure)) throw error
      if (retryCount >= RETRY_LIMIT) return fail(error.message)
      await updateFollowUp(db, organizationId, followUp.id, { syncError: error.message })
      log.warn({ followUpId, failure: error.message }, 'the tracker did not create the ticket; trying again')
      throw error
    }
  }

  return {
    async start() {
      await ensureQueue(jobs, FOLLOW_UP_SYNC_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 10, retryBackoff: true, expireInSeconds: 120 })
      await workEach<FollowUpSyncJob>(jobs, FOLLOW_UP_SYNC_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) =>
        sync(job.data, job.retryCount),
      )
    },
    stop: () => jobs.offWork(FOLLOW_UP_SYNC_QUEUE),
  }
}
