import { randomUUID } from 'node:crypto'
import type { Executor, Json } from '@svc/db'
import { inTransaction, type JobQueue } from '@svc/jobs'
import type { Notifier, OutboundMessageRequest } from '@svc/notifier'
import { type AlertEventType, insertAlertEvents } from '../alerts/index.js'
import { insertAckLinks, insertAttempts, type NewAckLink, type NewAttempt } from './queries.js'

/** A job a step sends: a chat message's delivery or the escalation's next step, on its queue. */
interface QueuedJob {
  name: string
  data: object
  singletonKey: string
  startAfter?: Date
}

/**
 * What escalation steps write, collected while one transaction pages (one alert's step, or a
 * whole batch of new alerts' first steps) and written at its end in a handful of statements:
 * the outbox messages and their jobs, the attempts naming them, acknowledgement links, timeline
 * entries, and the chat and next-step jobs. Ids are made here, so an attempt can name its message
 * before either is written. Paging a burst costs a few statements per batch, not a dozen per alert.
 */
export function createStepWrites(deps: { notifier: Notifier; jobs: JobQueue }) {
  const messages: Array<OutboundMessageRequest & { id: string }> = []
  const attempts: Array<NewAttempt & { id: string }> = []
  const ackLinks: NewAckLink[] = []
  const events: Array<{ organizationId: string; alertId: string; type: AlertEventType; data: Json }> = []
  const jobs: QueuedJob[] = []

  return {
    /** An outbox message; answers its id, and why it is held when no provider can carry it. */
    message(request: OutboundMessageRequest): { messageId: string; held: string | undefined } {
      const id = randomUUID()
      messages.push({ ...request, id })
      return { messageId: id, held: deps.notifier.heldReason(request.channel) }
    },
    /** An attempt; answers its id. */
    attempt(attempt: NewAttempt): string {
      const id = randomUUID()
      attempts.push({ ...attempt, id })
      return id
    },
    ackLink(link: NewAckLink): void {
      ackLinks.push(link)
    },
    event(organizationId: string, alertId: string, type: AlertEventType, data: Json): void {
      events.push({ organizationId, alertId, type, data })
    },
    job(job: QueuedJob): void {
      jobs.push(job)
    },
    /** Whether anything will go out once the transaction commits (the workers are woken then). */
    get queuesDeliveries(): boolean {
      return messages.length > 0 || jobs.length > 0
    },
    /** Writes everything collected, in the caller's transaction, in dependency order. */
    async flush(trx: Executor): Promise<void> {
      await deps.notifier.queueMessages(trx, messages.splice(0))
      await insertAttempts(trx, attempts.splice(0))
      await insertAckLinks(trx, ackLinks.splice(0))
      await insertAlertEvents(trx, events.splice(0))
      const queued = jobs.splice(0)
      if (queued.length > 0) await deps.jobs.insert(queued, { db: inTransaction(trx) })
    },
  }
}

export type StepWrites = ReturnType<typeof createStepWrites>
