import type { FastifyBaseLogger } from 'fastify'
import type { NotifierConfig } from '@svc/config'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, type JobQueue } from '@svc/jobs'
import { DeliveryError, type Channel, type EmailProvider, type OutboundEmail } from './message.js'
import { insertOutboxRow, markSent, markUndelivered, startAttempt } from './outbox.js'
import { smtpProvider } from './smtp.js'
import { outboxDeliveries } from '@svc/metrics'

/** One job per outbox message: `{ messageId }`. */
export const DELIVER_QUEUE = 'notifier.deliver'

interface DeliverJob {
  messageId: string
}

/** The attempt a job is on, as pg-boss counts it. */
interface Attempt {
  retryCount: number
  retryLimit: number
}

export interface NotifierDependencies {
  jobs: JobQueue
  database: Database
  config: NotifierConfig
  log: FastifyBaseLogger
}

export interface Notifier {
  readonly config: NotifierConfig
  /**
   * Writes an e-mail to the outbox in the caller's transaction and, when a provider can carry
   * it, queues its delivery in the same transaction: the message exists exactly when the change
   * that caused it commits. Without a provider it is stored as `held` and logged.
   */
  queueEmail(executor: Executor, email: OutboundEmail): Promise<{ messageId: string; status: 'pending' | 'held' }>
  /** Lets the worker look now rather than at its next poll; call after the transaction commits. */
  wake(): void
  /** Creates the delivery queue and starts this replica's worker. */
  start(): Promise<void>
  stop(): Promise<void>
}

const POLLING_INTERVAL_SECONDS = 1
const NO_PROVIDER = 'no e-mail provider is configured (set SMTP_URL): held in the outbox'

/** The one way the services send messages (ARCHITECTURE.md, "Between surfaces"): outbox first, then a job. */
export function createNotifier({ jobs, database, config, log }: NotifierDependencies): Notifier {
  const providers: Partial<Record<Channel, EmailProvider>> = config.smtpUrl ? { email: smtpProvider(config.smtpUrl, config.from) } : {}
  let worker: string | undefined

  async function deliver(job: DeliverJob, attempt: Attempt): Promise<void> {
    const { db } = database
    const message = await startAttempt(db, job.messageId)
    // Settled already: the job was delivered twice.
    if (!message) return
    const provider = providers[message.channel as Channel]
    if (!provider) {
      await markUndelivered(db, message.id, { status: 'held', provider: null, reason: NO_PROVIDER })
      outboxDeliveries.inc({ channel: message.channel, outcome: 'held' })
      return
    }
    try {
      const sent = await provider.send({
        to: message.recipient,
        subject: message.subject ?? '',
        text: message.bodyText,
        ...(message.bodyHtml ? { html: message.bodyHtml } : {}),
      })
      await markSent(db, message.id, provider.name, sent.messageId)
      outboxDeliveries.inc({ channel: message.channel, outcome: 'sent' })
      log.info({ messageId: message.id, attempt: message.attempts }, 'message delivered')
    } catch (error) {
      const failure =
        error instanceof DeliveryError ? error : new DeliveryError(`${provider.name}: ${(error as Error).message}`, false, { cause: error })
      const retrying = !failure.permanent && attempt.retryCount < attempt.retryLimit
      await markUndelivered(db, message.id, { status: retrying ? 'pending' : 'failed', provider: provider.name, reason: failure.message })
      outboxDeliveries.inc({ channel: message.channel, outcome: retrying ? 'retry' : 'failed' })
      log.warn({ messageId: message.id, attempt: message.attempts, retrying, err: failure }, 'message not delivered')
      // Throwing hands the job back to pg-boss, which retries it after its backoff.
      if (retrying) throw failure
    }
  }

  return {
    config,
    async queueEmail(executor, email) {
      const status = providers.email ? 'pending' : 'held'
      const messageId = await insertOutboxRow(executor, {
        organizationId: email.organizationId,
        channel: 'email',
        kind: email.kind,
        recipient: email.to,
        subject: email.subject,
        bodyText: email.text,
        bodyHtml: email.html ?? null,
        status,
        lastError: status === 'held' ? NO_PROVIDER : null,
      })
      if (status === 'pending') {
        await jobs.send(DELIVER_QUEUE, { messageId } satisfies DeliverJob, { db: inTransaction(executor), singletonKey: messageId })
      } else {
        log.info(
          { messageId, kind: email.kind, to: email.to, subject: email.subject, text: email.text },
          'e-mail held in the outbox: SMTP_URL is not set',
        )
      }
      return { messageId, status }
    },
    wake() {
      if (worker) jobs.notifyWorker(worker)
    },
    async start() {
      await ensureQueue(jobs, DELIVER_QUEUE, {
        retryLimit: config.retryLimit,
        retryDelay: config.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: 5 * 60,
      })
      worker = await jobs.work<DeliverJob>(
        DELIVER_QUEUE,
        { includeMetadata: true, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        async ([job]) => {
          if (job) await deliver(job.data, job)
        },
      )
    },
    async stop() {
      await jobs.offWork(DELIVER_QUEUE)
      worker = undefined
    },
  }
}
