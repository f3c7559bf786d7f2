import type { FastifyBaseLogger } from 'fastify'
import { Webhook } from 'standardwebhooks'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import { alertBody, type AlertRow } from '../../alerts/index.js'
import { TargetRefused, type OutboundClient } from '../http.js'
import { insertDelivery, settleDelivery, startDelivery } from './queries.js'

/** One job per delivery: `{ deliveryId }`. */
export const WEBHOOK_QUEUE = 'alerting.webhook-delivery'
/** Retries after the first try, 10 s apart and doubling: the last is about 5 minutes after the first. */
const RETRY_LIMIT = 5

export const outboundEvents = ['alert.created', 'alert.acknowledged', 'alert.resolved', 'alert.escalated'] as const
export type OutboundEvent = (typeof outboundEvents)[number]
/** What a delivery carries: a subscribed event, or a deploy a workflow sends on. */
/** An event a webhook subscribes to, or the trigger of the workflow that calls it. */
export type DeliveredEvent = OutboundEvent | 'deploy.recorded' | `incident.${string}`

interface WebhookJob {
  deliveryId: string
}

/** The body of every delivery: Standard Webhooks' `{ type, timestamp, data }`. */
export function alertPayload(event: OutboundEvent, organizationId: string, alert: AlertRow, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: event, timestamp: new Date().toISOString(), data: { organizationId, alert: alertBody(alert), ...extra } })
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>

/**
 * Outbound webhook deliveries, signed per the Standard Webhooks specification with its
 * `standardwebhooks` package (`webhook-id`, `webhook-timestamp`, `webhook-signature`), each a
 * pg-boss job retried with backoff until a 2xx answer; the delivery log keeps every outcome.
 */
/**
 * How a delivery that carried a page went, for the page's attempt: paging's to record, so it is
 * handed in (destinations sit below paging).
 */
export type AttemptSettler = (db: Executor, attemptId: string, status: 'queued' | 'sent' | 'failed', error: string | null) => Promise<void>

export function createWebhookDelivery({
  database,
  jobs,
  outbound,
  settleAttempt,
  log,
}: {
  database: Database
  jobs: JobQueue
  outbound: OutboundClient
  settleAttempt: AttemptSettler
  log: FastifyBaseLogger
}) {
  let worker: string | undefined

  async function deliver(job: WebhookJob, attempt: { retryCount: number }): Promise<void> {
    const { db } = database
    const delivery = await startDelivery(db, job.deliveryId)
    if (!delivery) return
    const settle = async (status: 'pending' | 'delivered' | 'failed', responseStatus: number | null, error: string | null) => {
      await settleDelivery(db, delivery.id, { status, responseStatus, error })
      if (delivery.attemptId)
        await settleAttempt(db, delivery.attemptId, status === 'pending' ? 'queued' : status === 'delivered' ? 'sent' : 'failed', error)
    }
    if (!delivery.enabled) return settle('failed', null, 'the webhook is disabled')
    // The same id on every retry, so receivers can tell a retry from a new event.
    const messageId = `msg_${delivery.id}`
    const sentAt = new Date()
    const headers = {
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(delivery.secret).sign(messageId, sentAt, delivery.payload),
    }
    let failure: string
    let permanent = false
    let responseStatus: number | null = null
    try {
      const answer = await outbound.postJson(delivery.url, delivery.payload, headers)
      responseStatus = answer.status
      if (answer.status >= 200 && answer.status < 300) return settle('delivered', answer.status, null)
      failure = `answered ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`
    } catch (error) {
      failure = (error as Error).message
      permanent = error instanceof TargetRefused
    }
    const retrying = !permanent && attempt.retryCount < RETRY_LIMIT
    await settle(retrying ? 'pending' : 'failed', responseStatus, failure)
    log.warn({ deliveryId: delivery.id, retrying, failure }, 'webhook not delivered')
    if (retrying) throw new Error(failure)
  }

  return {
    /** Writes a delivery and sends its job, in the caller's transaction. */
    async queue(
      db: Executor,
      delivery: {
        webhookId: string
        organizationId: string
        event: DeliveredEvent
        alertId: string | null
        attemptId: string | null
        payload: string
      },
    ): Promise<string> {
      const deliveryId = await insertDelivery(db, delivery)
      await jobs.send(WEBHOOK_QUEUE, { deliveryId } satisfies WebhookJob, { db: inTransaction(db), singletonKey: deliveryId })
      return deliveryId
    },
    wake() {
      if (worker) jobs.notifyWorker(worker)
    },
    async start() {
      await ensureQueue(jobs, WEBHOOK_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 10, retryBackoff: true, expireInSeconds: 60 })
      worker = await workEach<WebhookJob>(jobs, WEBHOOK_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, (job) =>
        deliver(job.data, job),
      )
    },
    async stop() {
      await jobs.offWork(WEBHOOK_QUEUE)
      worker = undefined
    },
  }
}
