import type { FastifyBaseLogger } from 'fastify'
import type { NotifierConfig } from '@svc/config'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, workBatch, workEach, type JobQueue } from '@svc/jobs'
import { DeliveryError, type Channel, type MessageProvider, type OutboundEmail, type OutboundMessageRequest } from './message.js'
import {
  earlierPendingTo,
  extendClaims,
  insertOutboxRow,
  insertOutboxRows,
  markAllSent,
  markSent,
  markUndelivered,
  releaseLapsedClaims,
  startAttempt,
  startAttempts,
  type NewOutboxRow,
} from './outbox.js'
import { CATCHABLE, catcherProvider } from './catcher.js'
import { smtpProvider } from './smtp.js'
import { twilioProviders } from './twilio.js'
import { webPushProvider } from './web-push.js'
import { webhookProvider, type WebhookProviderOptions } from './webhook.js'
import { outboxDeliveries } from '@svc/metrics'

/** One job per outbox message: `{ messageId }`. */
export const DELIVER_QUEUE = 'notifier.deliver'
/**
 * Webhook messages (status page subscribers) have a queue and a worker of their own: a slow or
 * failing receiver holds its worker up to the request timeout, and must never delay e-mail,
 * SMS, voice or push (decision 0011, "Webhooks apart").
 */
export const DELIVER_WEBHOOK_QUEUE = 'notifier.deliver.webhook'
const queueOf = (channel: Channel) => (channel === 'webhook' ? DELIVER_WEBHOOK_QUEUE : DELIVER_QUEUE)

/**
 * A message being sent is claimed this long, renewed every CLAIM_RENEW_MS while its provider
 * works; a claim that runs out means the sender died, and the sweep (every SWEEP_MS) sends the
 * message again: a page whose sender was killed waits about 20 seconds, not the job's expiry.
 */
const CLAIM_SECONDS = 15
const CLAIM_RENEW_MS = 5_000
const SWEEP_MS = 5_000

/** How long a webhook message waits in its worker for an earlier one to the same receiver to settle. */
const ORDER_WAIT_MS = 10_000
const ORDER_POLL_MS = 100

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
  /** Webhook messages (status page subscribers): how a recipient's URL and secret are found. */
  webhooks?: WebhookProviderOptions
  /** Removes web-push subscriptions whose push service answered that they are gone (404, 410). */
  removePushSubscriptions?: (endpoints: string[]) => Promise<unknown>
  /** Where the catcher (`config.catchMessages`) prints its lines; unset: standard output. */
  printCaptured?: (line: string) => void
}

export interface Notifier {
  readonly config: NotifierConfig
  /**
   * Writes an e-mail to the outbox in the caller's transaction and, when a provider can carry
   * it, queues its delivery in the same transaction: the message exists exactly when the change
   * that caused it commits. Without a provider it is stored as `held` and logged.
   */
  queueEmail(executor: Executor, email: OutboundEmail): Promise<{ messageId: string; status: 'pending' | 'held' }>
  /** `queueEmail` for any channel; a channel without a provider holds the message and answers why. */
  queueMessage(
    executor: Executor,
    message: OutboundMessageRequest,
  ): Promise<{ messageId: string; status: 'pending' | 'held'; reason?: string }>
  /**
   * `queueMessage` for many messages in two statements (their outbox rows, then their jobs), each
   * with the id its caller chose, so rows written in the same transaction can name them first.
   */
  queueMessages(executor: Executor, messages: Array<OutboundMessageRequest & { id: string }>): Promise<void>
  /** Why a message on this channel would be held (no provider is configured), or undefined. */
  heldReason(channel: Channel): string | undefined
  /** Lets the worker look now rather than at its next poll; call after the transaction commits. */
  wake(): void
  /** Creates the delivery queues and starts this replica's workers. */
  start(): Promise<void>
  stop(): Promise<void>
}

const POLLING_INTERVAL_SECONDS = 1
/**
 * Messages sent at once by a replica: a paging burst must not wait in line behind one slow SMTP
 * server. Fifty a batch (over smtp.ts's 20 connections) keeps up with 300 pages a second on two
 * cores, where twenty a batch, each batch's claim, marks and job fetches around about 40 ms of
 * sending, did not (decision 0011, "Batches").
 */
const BATCH_SIZE = 50
/**
 * Batches in flight at once per replica: while one batch is being sent, the other's claim, marks
 * and pg-boss's fetch and completion are written, so at 300 pages a second the sender keeps a
 * margin instead of running at its limit (decision 0011, "Batches").
 */
const SENDERS = 2
/** Webhook messages go one at a time in their receiver's order: a fetch of twenty is plenty. */
const WEBHOOK_BATCH_SIZE = 20
/** Why a channel's messages are held: its provider's settings are missing. */
export const NO_PROVIDER: Record<Channel, string> = {
  email: 'no e-mail provider is configured (set SMTP_URL): held in the outbox',
  sms: 'no SMS provider is configured (set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM): held in the outbox',
  voice: 'no voice provider is configured (set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM): held in the outbox',
  push: 'no push provider is configured (set VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT): held in the outbox',
  chat: 'chat messages are not sent through the outbox: held',
  webhook: 'no webhook targets are known to this service: held in the outbox',
}

/** The providers the configuration makes available, by channel. */
function providersOf(
  config: NotifierConfig,
  {
    webhooks,
    removePushSubscriptions,
    log,
    printCaptured,
  }: Pick<NotifierDependencies, 'webhooks' | 'removePushSubscriptions' | 'log' | 'printCaptured'>,
): Partial<Record<Channel, MessageProvider>> {
  const providers: Partial<Record<Channel, MessageProvider>> = {}
  if (config.smtpUrl) {
    const smtp = smtpProvider(config.smtpUrl, config.from)
    providers.email = {
      name: smtp.name,
      send: (message) => smtp.send(message),
      close: () => smtp.close?.(),
    }
  }
  if (config.twilio) Object.assign(providers, twilioProviders(config.twilio))
  if (config.webPush) {
    // A failed removal costs one more refused push later: logged, never a failed page.
    const withdrawn = async (endpoints: string[]) => {
      await removePushSubscriptions?.(endpoints).then(
        () => log.info({ subscriptions: endpoints.length }, 'withdrawn push subscriptions removed'),
        (error: unknown) => log.warn({ err: error }, 'withdrawn push subscriptions were not removed'),
      )
    }
    providers.push = webPushProvider(config.webPush, withdrawn)
  }
  if (webhooks) providers.webhook = webhookProvider(webhooks)
  if (config.catchMessages) {
    const print = printCaptured ?? ((line: string) => process.stdout.write(`${line}\n`))
    for (const channel of CATCHABLE) providers[channel] ??= catcherProvider(channel, print, config.capturedAt)
  }
  return providers
}

/** The one way the services send messages (ARCHITECTURE.md, "Between surfaces"): outbox first, then a job. */
export function createNotifier({
  jobs,
  database,
  config,
  log,
  webhooks,
  removePushSubscriptions,
  printCaptured,
}: NotifierDependencies): Notifier {
  const providers = providersOf(config, { webhooks, removePushSubscriptions, log, printCaptured })
  let workers: string[] = []
  let webhookWorker: string | undefined
  let sweeping: NodeJS.Timeout | undefined

  /**
   * A webhook receiver gets its messages in the order they were written: a message waits while
   * an earlier one to the same receiver is pending (briefly here, then by the job's retry), except
   * on its last try, when a delivery out of order beats none.
   */
  async function awaitTurn(messageId: string, attempt: Attempt): Promise<void> {
    if (attempt.retryCount >= attempt.retryLimit) return
    const deadline = Date.now() + ORDER_WAIT_MS
    while (await earlierPendingTo(database.db, messageId)) {
      if (Date.now() > deadline) throw new Error('an earlier message to this receiver is still pending')
      await new Promise((resolve) => setTimeout(resolve, ORDER_POLL_MS))
    }
  }

  type ClaimedMessage = NonNullable<Awaited<ReturnType<typeof startAttempt>>>
  type SentMessage = Parameters<typeof markAllSent>[1][number] & Pick<ClaimedMessage, 'channel' | 'attempts'>

  /**
   * Hands one claimed message to its channel's provider. Answers what to mark sent; records a
   * message no provider can carry as held, and a failure as pending (throwing, so its job is
   * retried) or failed.
   */
  async function sendClaimed(message: ClaimedMessage, attempt: Attempt): Promise<SentMessage | undefined> {
    const { db } = database
    const provider = providers[message.channel as Channel]
    if (!provider) {
      await markUndelivered(db, message.id, { status: 'held', provider: null, reason: NO_PROVIDER[message.channel as Channel] })
      outboxDeliveries.inc({ channel: message.channel, outcome: 'held' })
      return undefined
    }
    try {
      const sent = await provider.send({
        id: message.id,
        to: message.recipient,
        subject: message.subject ?? '',
        text: message.bodyText,
        ...(message.bodyHtml ? { html: message.bodyHtml } : {}),
        ...(message.unsubscribeUrl ? { unsubscribeUrl: message.unsubscribeUrl } : {}),
      })
      const status = provider.captures ? 'captured' : 'sent'
      return {
        id: message.id,
        provider: provider.name,
        providerMessageId: sent.messageId,
        status,
        channel: message.channel,
        attempts: message.attempts,
      }
    } catch (error) {
      const failure =
        error instanceof DeliveryError ? error : new DeliveryError(`${provider.name}: ${(error as Error).message}`, false, { cause: error })
      const retrying = !failure.permanent && attempt.retryCount < attempt.retryLimit
      await markUndelivered(db, message.id, { status: retrying ? 'pending' : 'failed', provider: provider.name, reason: failure.message })
      outboxDeliveries.inc({ channel: message.channel, outcome: retrying ? 'retry' : 'failed' })
      log.warn({ messageId: message.id, attempt: message.attempts, retrying, err: failure }, 'message not delivered')
      // Throwing hands the job back to pg-boss, which retries it after its backoff.
      if (retrying) throw failure
      return undefined
    }
  }

  function delivered(sent: SentMessage[]): void {
    for (const message of sent) {
      outboxDeliveries.inc({ channel: message.channel, outcome: message.status })
      log.info({ messageId: message.id, attempt: message.attempts }, 'message delivered')
    }
  }

  /** Renews the claims of the messages still being sent, until stopped. */
  function renewClaims(sending: () => string[]): () => void {
    const timer = setInterval(() => {
      extendClaims(database.db, sending(), CLAIM_SECONDS).catch((error: Error) => log.warn({ err: error }, 'claims not renewed'))
    }, CLAIM_RENEW_MS)
    return () => clearInterval(timer)
  }

  /**
   * E-mail, SMS, voice and push, a batch of jobs at a time: the batch's messages are claimed in one
   * statement, sent side by side, and the sent ones marked in one statement once all are done
   * (decision 0011, "Batches"). Failures are recorded one by one.
   */
  async function deliverAll(batch: Array<{ data: DeliverJob } & Attempt>): Promise<Array<Error | undefined>> {
    const { db } = database
    const claimed = new Map(
      (
        await startAttempts(
          db,
          batch.map((job) => job.data.messageId),
          CLAIM_SECONDS,
        )
      ).map((row) => [row.id, row]),
    )
    const sending = new Set(claimed.keys())
    const stopRenewing = renewClaims(() => [...sending])
    const sent: SentMessage[] = []
    try {
      return await Promise.all(
        batch.map(async (job) => {
          // Settled already (the job ran twice), or another sender holds it.
          const message = claimed.get(job.data.messageId)
          if (!message) return undefined
          try {
            const outcome = await sendClaimed(message, job)
            if (outcome) sent.push(outcome)
            return undefined
          } catch (error) {
            return error as Error
          } finally {
            sending.delete(message.id)
          }
        }),
      )
    } finally {
      stopRenewing()
      await markAllSent(db, sent)
      delivered(sent)
    }
  }

  /** Webhook messages, one at a time, each after the earlier ones to its receiver (`awaitTurn`). */
  async function deliverInOrder(job: DeliverJob, attempt: Attempt): Promise<void> {
    const { db } = database
    await awaitTurn(job.messageId, attempt)
    const message = await startAttempt(db, job.messageId, CLAIM_SECONDS)
    // Settled already: the job was delivered twice.
    if (!message) return
    const stopRenewing = renewClaims(() => [message.id])
    try {
      const sent = await sendClaimed(message, attempt)
      if (sent) {
        await markSent(db, sent.id, sent.provider, sent.providerMessageId, sent.status)
        delivered([sent])
      }
    } finally {
      stopRenewing()
    }
  }

  /** Messages whose sender died while sending (their claim ran out) get a job again. */
  async function sweep(): Promise<void> {
    await database.db.transaction().execute(async (trx) => {
      const lapsed = await releaseLapsedClaims(trx)
      if (lapsed.length === 0) return
      await jobs.insert(
        lapsed.map((row) => ({ name: queueOf(row.channel as Channel), data: { messageId: row.id } satisfies DeliverJob })),
        { db: inTransaction(trx) },
      )
      log.warn({ messages: lapsed.length }, 'messages whose sender stopped while sending are sent again')
    })
  }

  /** A message's outbox row: pending when a provider can carry it, else held with the reason. */
  function outboxRowOf(message: OutboundMessageRequest): NewOutboxRow {
    const reason = providers[message.channel] ? undefined : NO_PROVIDER[message.channel]
    return {
      organizationId: message.organizationId,
      channel: message.channel,
      kind: message.kind,
      recipient: message.to,
      subject: message.subject ?? null,
      bodyText: message.text,
      bodyHtml: message.html ?? null,
      unsubscribeUrl: message.unsubscribeUrl ?? null,
      status: reason ? 'held' : 'pending',
      lastError: reason ?? null,
    }
  }

  /**
   * A held message is logged by id and kind only: its body may hold a verification code or an
   * acknowledgement link, which are credentials. Its content is read with `pnpm outbox`.
   */
  function logHeld(messageId: string, message: OutboundMessageRequest): void {
    log.info(
      { messageId, channel: message.channel, kind: message.kind },
      `${message.channel} message held in the outbox: no provider is configured (read it with pnpm outbox)`,
    )
  }

  return {
    config,
    async queueEmail(executor, email) {
      const { to, subject, text, html, organizationId, kind } = email
      const queued = await this.queueMessage(executor, {
        organizationId,
        kind,
        channel: 'email',
        to,
        subject,
        text,
        ...(html ? { html } : {}),
      })
      return { messageId: queued.messageId, status: queued.status }
    },
    async queueMessage(executor, message) {
      const row = outboxRowOf(message)
      const messageId = await insertOutboxRow(executor, row)
      if (row.status === 'pending') {
        await jobs.send(queueOf(message.channel), { messageId } satisfies DeliverJob, {
          db: inTransaction(executor),
          singletonKey: messageId,
        })
      } else logHeld(messageId, message)
      return { messageId, status: row.status, ...(row.lastError ? { reason: row.lastError } : {}) }
    },
    async queueMessages(executor, messages) {
      if (messages.length === 0) return
      const rows = messages.map((message) => ({ ...outboxRowOf(message), id: message.id }))
      await insertOutboxRows(executor, rows)
      const pending = rows.filter((row) => row.status === 'pending')
      if (pending.length > 0) {
        await jobs.insert(
          pending.map((row) => ({ name: queueOf(row.channel), data: { messageId: row.id } satisfies DeliverJob, singletonKey: row.id })),
          { db: inTransaction(executor) },
        )
      }
      for (const message of messages) if (!providers[message.channel]) logHeld(message.id, message)
    },
    heldReason(channel) {
      return providers[channel] ? undefined : NO_PROVIDER[channel]
    },
    wake() {
      for (const worker of workers) jobs.notifyWorker(worker)
      if (webhookWorker) jobs.notifyWorker(webhookWorker)
    },
    async start() {
      const policy = {
        retryLimit: config.retryLimit,
        retryDelay: config.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: 5 * 60,
      }
      await ensureQueue(jobs, DELIVER_QUEUE, policy)
      await ensureQueue(jobs, DELIVER_WEBHOOK_QUEUE, policy)
      const polling = { pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }
      for (let sender = 0; sender < SENDERS; sender++)
        workers.push(await workBatch<DeliverJob>(jobs, DELIVER_QUEUE, { ...polling, batchSize: BATCH_SIZE }, deliverAll))
      webhookWorker = await workEach<DeliverJob>(jobs, DELIVER_WEBHOOK_QUEUE, { ...polling, batchSize: WEBHOOK_BATCH_SIZE }, (job) =>
        deliverInOrder(job.data, job),
      )
      sweeping = setInterval(() => {
        sweep().catch((error: Error) => log.warn({ err: error }, 'outbox sweep failed'))
      }, SWEEP_MS)
      sweeping.unref()
    },
    async stop() {
      clearInterval(sweeping)
      await jobs.offWork(DELIVER_QUEUE)
      await jobs.offWork(DELIVER_WEBHOOK_QUEUE)
      workers = []
      webhookWorker = undefined
      for (const provider of Object.values(providers)) provider.close?.()
    },
  }
}
