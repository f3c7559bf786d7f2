import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { createPoller } from './poller.js'
import { CorrelationBatch, correlateAlert } from './incidents/correlation/correlate.js'
import { findAlert } from './alerts/queries.js'
import {
  anyUndispatchedEvent,
  claimUndispatchedEvents,
  markDispatched,
  subscribedWebhooks,
} from './destinations/outbound-webhooks/queries.js'
import type { WorkflowRunner } from './workflows/runner.js'
import { alertPayload, type OutboundEvent, type WebhookDelivery } from './destinations/outbound-webhooks/delivery.js'

const POLL_MS = 1_000
const BATCH = 100
const EVENTS: Record<string, OutboundEvent & `alert.${'created' | 'acknowledged' | 'resolved'}`> = {
  created: 'alert.created',
  acknowledged: 'alert.acknowledged',
  resolved: 'alert.resolved',
}

/**
 * Dispatches alert lifecycle events to the outbound webhooks subscribed to them and to the
 * workflows they trigger (workflows/runner.ts), and puts each new alert in its incident
 * (incidents/correlation/correlate.ts). The events are the alert timeline's own rows
 * (written in the statement or transaction of their change), claimed `for update skip locked`
 * and marked dispatched in the transaction that writes their deliveries and runs: nothing is
 * lost between a change and its webhooks or workflows, and no event is sent twice.
 */
export function createEventDispatcher({
  database,
  deliveries,
  workflows,
  correlated,
  jobs,
  log,
}: {
  database: Database
  /** Announces incidents that new services joined (`incident.changed`), in the dispatching transaction. */
  jobs: JobQueue
  deliveries: WebhookDelivery
  workflows: Pick<WorkflowRunner, 'queueRuns' | 'wake'>
  /** New alerts were correlated: the escalations waiting for it may start (paging/escalator.ts). */
  correlated: () => void
  log: FastifyBaseLogger
}) {
  async function dispatchBatch(): Promise<{ claimed: number; queued: number; runs: number; created: number }> {
    return database.db.transaction().execute(async (trx) => {
      const events = await claimUndispatchedEvents(trx, BATCH)
      const correlation = new CorrelationBatch()
      const createdByOrganization = new Map<string, string[]>()
      for (const event of events)
        if (event.type === 'created')
          createdByOrganization.set(event.organizationId, [...(createdByOrganization.get(event.organizationId) ?? []), event.alertId])
      for (const [organizationId, alertIds] of createdByOrganization) await correlation.prepare(trx, organizationId, alertIds)
      let queued = 0
      let runs = 0
      let created = 0
      for (const event of events) {
        const type = EVENTS[event.type]
        if (!type) continue
        if (event.type === 'created') {
          await correlateAlert(correlation, trx, event.alertId)
          created += 1
        }
        runs += await workflows.queueRuns(trx, event.organizationId, {
          trigger: type,
          eventKey: `alert-event:${event.id}`,
          alertId: event.alertId,
          occurredAt: event.createdAt,
        })
        const webhooks = await subscribedWebhooks(trx, event.organizationId, type)
        if (webhooks.length === 0) continue
        const alert = await findAlert(trx, event.organizationId, event.alertId)
        if (!alert) continue
        const payload = alertPayload(type, event.organizationId, alert, { actorUserId: event.actorUserId })
        for (const webhook of webhooks) {
          await deliveries.queue(trx, {
            webhookId: webhook.id,
            organizationId: event.organizationId,
            event: type,
            alertId: alert.id,
            attemptId: null,
            payload,
          })
          queued += 1
        }
      }
      await correlation.flush(trx, jobs)
      await markDispatched(
        trx,
        events.map((event) => event.id),
      )
      return { claimed: events.length, queued, runs, created }
    })
  }

  return createPoller({
    intervalMs: POLL_MS,
    log,
    what: 'dispatching alert events',
    async round() {
      // Most rounds are the interval's, and most find nothing: a cheap look before the claiming transaction.
      if (!(await anyUndispatchedEvent(database.db))) return { more: false }
      const batch = await dispatchBatch()
      if (batch.queued > 0) deliveries.wake()
      if (batch.runs > 0) workflows.wake()
      if (batch.created > 0) correlated()
      return { more: batch.claimed === BATCH }
    },
  })
}
