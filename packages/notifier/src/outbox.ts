import { sql } from 'kysely'
import { deleteInBatches, type Executor } from '@svc/db'
import type { Channel, OutboxStatus } from './message.js'

export interface NewOutboxRow {
  organizationId: string | null
  channel: Channel
  kind: string
  recipient: string
  subject: string | null
  bodyText: string
  bodyHtml: string | null
  unsubscribeUrl: string | null
  status: Extract<OutboxStatus, 'pending' | 'held'>
  /** Why a message is held. */
  lastError: string | null
}

/** Many rows in one statement, each with the id its caller chose. */
export async function insertOutboxRows(db: Executor, rows: Array<NewOutboxRow & { id: string }>): Promise<void> {
  if (rows.length > 0) await db.insertInto('core.outbox').values(rows).execute()
}

export async function insertOutboxRow(db: Executor, row: NewOutboxRow): Promise<string> {
  const { id } = await db.insertInto('core.outbox').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

/**
 * Claims a pending message for `claimSeconds` and counts one more attempt at it; undefined once it
 * is settled, or while another sender holds a live claim on it (a job delivered twice).
 */
export async function startAttempt(db: Executor, messageId: string, claimSeconds: number) {
  const [claimed] = await startAttempts(db, [messageId], claimSeconds)
  return claimed
}

/** `startAttempt` for a batch of jobs' messages, in one statement: the ones another sender holds or that are settled are left out. */
export async function startAttempts(db: Executor, messageIds: string[], claimSeconds: number) {
  if (messageIds.length === 0) return []
  return db
    .updateTable('core.outbox')
    .set({
      attempts: sql<number>`attempts + 1`,
      claimedUntil: sql<Date>`now() + make_interval(secs => ${claimSeconds})`,
      updatedAt: sql<Date>`now()`,
    })
    .where('id', 'in', messageIds)
    .where('status', '=', 'pending')
    .where((where) => where.or([where('claimedUntil', 'is', null), where('claimedUntil', '<', sql<Date>`now()`)]))
    .returning(['id', 'channel', 'recipient', 'subject', 'bodyText', 'bodyHtml', 'unsubscribeUrl', 'attempts'])
    .execute()
}

/** The senders of these messages are still at it: their claims run on. */
export async function extendClaims(db: Executor, messageIds: string[], claimSeconds: number): Promise<void> {
  if (messageIds.length === 0) return
  await db
    .updateTable('core.outbox')
    .set({ claimedUntil: sql<Date>`now() + make_interval(secs => ${claimSeconds})` })
    .where('id', 'in', messageIds)
    .where('status', '=', 'pending')
    .execute()
}

/**
 * Pending messages whose claim ran out (their sender died while sending): released, and answered
 * so each gets a job again. Each is taken once, whichever replica sweeps first.
 */
export async function releaseLapsedClaims(db: Executor) {
  return db
    .updateTable('core.outbox')
    .set({ claimedUntil: null })
    .where('status', '=', 'pending')
    .where('claimedUntil', '<', sql<Date>`now()`)
    .returning(['id', 'channel'])
    .execute()
}

/**
 * Whether an earlier message to the same recipient on the channel is still pending: a webhook
 * recipient gets its messages in the order they were written (decision 0011, "Order"), by the
 * sequence value each row drew when written.
 */
export async function earlierPendingTo(db: Executor, messageId: string): Promise<boolean> {
  const row = await sql<{ waiting: boolean }>`
    select exists (
      select 1 from core.outbox earlier, core.outbox this
      where this.id = ${messageId} and earlier.recipient = this.recipient and earlier.channel = this.channel
        and earlier.status = 'pending' and earlier.seq < this.seq
    ) as waiting`.execute(db)
  return row.rows[0]?.waiting ?? false
}

export async function markSent(
  db: Executor,
  messageId: string,
  provider: string,
  providerMessageId: string,
  status: 'sent' | 'captured' = 'sent',
): Promise<void> {
  // The provider's report on this very message can be written first (Twilio calls back as soon as
  // it knows, naming our message in its callback URL): what it said stands.
  const reported = sql<boolean>`status in ('delivered', 'failed') and provider_message_id is not distinct from ${providerMessageId}`
  await db
    .updateTable('core.outbox')
    .set({
      status: sql<OutboxStatus>`case when ${reported} then status else ${status} end`,
      lastError: sql<string | null>`case when ${reported} then last_error end`,
      provider,
      providerMessageId,
      sentAt: sql<Date>`coalesce(sent_at, now())`,
      claimedUntil: null,
      updatedAt: sql<Date>`now()`,
    })
    .where('id', '=', messageId)
    .execute()
}

/** `markSent` for several messages, in one statement, each keeping what its provider reported first. */
export async function markAllSent(
  db: Executor,
  sent: ReadonlyArray<{ id: string; provider: string; providerMessageId: string; status: 'sent' | 'captured' }>,
): Promise<void> {
  if (sent.length === 0) return
  // The planner takes a recordset for 100 rows; `= any` lets it read the batch's rows by key where
  // it would otherwise hash a scan of the whole outbox.
  await sql`
    update core.outbox o
    set status = case when o.status in ('delivered', 'failed') and o.provider_message_id is not distinct from s."providerMessageId"
                   then o.status else s.status end,
      last_error = case when o.status in ('delivered', 'failed') and o.provider_message_id is not distinct from s."providerMessageId"
                   then o.last_error end,
      provider = s.provider, provider_message_id = s."providerMessageId", sent_at = coalesce(o.sent_at, now()),
      claimed_until = null, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(sent)}::jsonb) as s(id uuid, provider text, "providerMessageId" text, status text)
    where o.id = s.id and o.id = any(${sent.map((message) => message.id)}::uuid[])`.execute(db)
}

/**
 * Records why an attempt did not deliver: `pending` leaves the message for the job's next retry,
 * `failed` ends it, `held` keeps it for a developer when no provider can carry it. A message the
 * provider reported on during the attempt (it took the message though our call failed) keeps
 * that report, and is not sent again.
 */
export async function markUndelivered(
  db: Executor,
  messageId: string,
  outcome: { status: 'pending' | 'failed' | 'held'; provider: string | null; reason: string },
): Promise<void> {
  await db
    .updateTable('core.outbox')
    .set({ status: outcome.status, provider: outcome.provider, lastError: outcome.reason, claimedUntil: null, updatedAt: sql<Date>`now()` })
    .where('id', '=', messageId)
    .where('status', '=', 'pending')
    .execute()
}

/** The newest messages first, for developers reading the outbox (`pnpm outbox`). */
export async function latestOutboxRows(db: Executor, filter: { status?: OutboxStatus; limit: number }) {
  let query = db
    .selectFrom('core.outbox')
    .select([
      'id',
      'organizationId',
      'channel',
      'kind',
      'recipient',
      'subject',
      'bodyText',
      'status',
      'attempts',
      'lastError',
      'provider',
      'createdAt',
      'sentAt',
    ])
  if (filter.status) query = query.where('status', '=', filter.status)
  return query.orderBy('createdAt', 'desc').orderBy('id').limit(filter.limit).execute()
}

/**
 * What a provider reported later about a message it took (Twilio's status callbacks): delivered,
 * or failed with its reason. Answers the message's id, or undefined when no message matches. A
 * report never moves a message back from `delivered`.
 *
 * With `messageId` (the callback URL named our message) the report is kept even when it arrives
 * before the send was recorded, and brings the provider's id with it; a report on another of the
 * provider's messages (an earlier attempt's), or on a message another provider carried, is ignored. Without it, the message is found by the
 * provider's id, as for callbacks registered before their URLs named the message.
 */
export async function recordDeliveryReport(
  db: Executor,
  provider: string,
  providerMessageId: string,
  report: { status: 'delivered' | 'failed'; reason: string | null },
  messageId?: string,
): Promise<string | undefined> {
  let query = db
    .updateTable('core.outbox')
    .set({
      status: report.status,
      lastError: report.reason,
      provider,
      providerMessageId,
      sentAt: sql<Date>`coalesce(sent_at, now())`,
      updatedAt: sql<Date>`now()`,
    })
    .where('status', 'in', ['sent', 'pending', 'failed'])
  query =
    messageId === undefined
      ? query.where('provider', '=', provider).where('providerMessageId', '=', providerMessageId)
      : query
          .where('id', '=', messageId)
          .where((eb) => eb.or([eb('provider', 'is', null), eb('provider', '=', provider)]))
          .where((eb) => eb.or([eb('providerMessageId', 'is', null), eb('providerMessageId', '=', providerMessageId)]))
  const row = await query.returning('id').executeTakeFirst()
  return row?.id
}

/** One message's channel and words (a voice call fetches what to say from it). */
export async function outboxMessage(db: Executor, messageId: string) {
  return db.selectFrom('core.outbox').select(['id', 'channel', 'kind', 'bodyText', 'status']).where('id', '=', messageId).executeTakeFirst()
}

/**
 * Sent and failed messages past OUTBOX_RETENTION_DAYS, in batches (decision 0022). Held messages
 * (no provider configured) stay: they are the only copy of what was meant to go out.
 */
export async function pruneOutbox(db: Executor, retentionDays: number, now = new Date()) {
  const before = new Date(now.getTime() - retentionDays * 86_400_000)
  return { outboxRemoved: await deleteInBatches(db, 'core.outbox', sql`status in ('sent', 'failed') and created_at < ${before}`) }
}
