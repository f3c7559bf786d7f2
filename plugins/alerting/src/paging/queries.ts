import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { alertsByIds, findAlert, type AlertRow } from '../alerts/index.js'
import type { PagingChannel } from '../oncall/index.js'

// Paging's tables: the attempts of a page (one per person, target and channel at a step) and the
// acknowledgement links a page carries. A page's alert is read through the alerts door.

export interface NewAttempt {
  organizationId: string
  alertId: string
  round: number
  step: number
  userId: string | null
  targetType: string
  targetId: string
  channel: string
  recipient: string | null
  status: 'queued' | 'failed'
  error: string | null
  /** The outbox message that carries it, when one does. */
  outboxMessageId?: string
}

export interface NewAckLink {
  tokenHash: string
  organizationId: string
  alertId: string
  userId: string
  expiresAt: Date
  smsCode: string
}

/** Many attempts in one statement, ids chosen by the caller; one tried before at its step is left out. */
export async function insertAttempts(db: Executor, attempts: Array<NewAttempt & { id: string }>): Promise<void> {
  if (attempts.length > 0)
    await db
      .insertInto('divinux.notificationAttempts')
      .values(attempts)
      .onConflict((oc) => oc.doNothing())
      .execute()
}

export async function insertAckLinks(db: Executor, links: NewAckLink[]): Promise<void> {
  if (links.length > 0) await db.insertInto('divinux.alertAckLinks').values(links).execute()
}

/** Records an attempt; undefined when this person (or target) was already tried on this channel at this step. */
export async function insertAttempt(db: Executor, attempt: NewAttempt) {
  const row = await db
    .insertInto('divinux.notificationAttempts')
    .values(attempt)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst()
  return row?.id
}

/**
 * An alert's attempts in order, with their delivery as the outbox (core.outbox, the notifier's
 * table) last recorded it: a message the provider took is `sent`, one it refused or no provider
 * could carry is `failed` with the reason.
 */
export async function listAttempts(db: Executor, organizationId: string, alertId: string) {
  return (
    db
      .selectFrom('divinux.notificationAttempts as n')
      .leftJoin('core.users as u', 'u.id', 'n.userId')
      .leftJoin('core.outbox as o', 'o.id', 'n.outboxMessageId')
      .select([
        'n.id',
        'n.round',
        'n.step',
        'n.userId',
        'u.email',
        'n.targetType',
        'n.targetId',
        'n.channel',
        'n.recipient',
        'n.status',
        'n.error',
        'n.createdAt',
        'n.updatedAt',
        'o.status as outboxStatus',
        'o.lastError as outboxError',
        'o.provider',
        'o.providerMessageId',
        'o.sentAt',
      ])
      .where('n.organizationId', '=', organizationId)
      .where('n.alertId', '=', alertId)
      // One step's attempts share their transaction's time: by person and channel within it.
      .orderBy('n.round')
      .orderBy('n.step')
      .orderBy('n.createdAt')
      .orderBy('u.email')
      .orderBy('n.targetId')
      .orderBy('n.channel')
      .execute()
  )
}

export type AttemptRow = Awaited<ReturnType<typeof listAttempts>>[number]

/** What the acknowledgement page shows of a link's alert. */
function alertShown(alert: AlertRow) {
  const { acknowledgedAt, resolvedAt, title, priority, status, service, source, description, createdAt } = alert
  return { acknowledgedAt, resolvedAt, title, priority, status, service, source, description, createdAt }
}

export async function findAckLink(db: Executor, tokenHash: string) {
  const link = await db
    .selectFrom('divinux.alertAckLinks')
    .select(['organizationId', 'alertId', 'userId', 'expiresAt', 'usedAt'])
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst()
  const alert = link && (await findAlert(db, link.organizationId, link.alertId))
  if (!link || !alert) return undefined
  const acknowledger = alert.acknowledgedBy
    ? await db.selectFrom('core.users').select('email').where('id', '=', alert.acknowledgedBy).executeTakeFirst()
    : undefined
  return { ...link, ...alertShown(alert), acknowledgedByEmail: acknowledger?.email ?? null }
}

/** Spends a link (compare-and-set): undefined when it was used, expired or never existed. */
export async function useAckLink(db: Executor, tokenHash: string) {
  return db
    .updateTable('divinux.alertAckLinks')
    .set({ usedAt: sql<Date>`now()` })
    .where('tokenHash', '=', tokenHash)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', sql<Date>`now()`)
    .returning(['organizationId', 'alertId', 'userId'])
    .executeTakeFirst()
}

/** The page an outbox message carried: whose, for which alert (a keypress on a call answers it). */
export async function attemptOfMessage(db: Executor, outboxMessageId: string) {
  return db
    .selectFrom('divinux.notificationAttempts')
    .select(['organizationId', 'alertId', 'userId'])
    .where('outboxMessageId', '=', outboxMessageId)
    .executeTakeFirst()
}

/** Unused, unexpired links whose SMS code this is (a reply names the code, not the link). */
export async function ackLinksWithSmsCode(db: Executor, smsCode: string) {
  const links = await db
    .selectFrom('divinux.alertAckLinks')
    .select(['tokenHash', 'organizationId', 'alertId', 'userId'])
    .where('smsCode', '=', smsCode)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', sql<Date>`now()`)
    .execute()
  const titles = new Map(
    (
      await alertsByIds(
        db,
        links.map((link) => link.alertId),
      )
    ).map((alert) => [alert.id, alert.title]),
  )
  return links.flatMap((link) => {
    const title = titles.get(link.alertId)
    return title === undefined ? [] : [{ ...link, title }]
  })
}

/**
 * The queued attempts the service makes itself (chat posts) of a batch of jobs, each with its
 * alert, in one read; the ones settled already are left out.
 */
export async function queuedAttempts(db: Executor, attemptIds: string[]) {
  if (attemptIds.length === 0) return []
  const attempts = await db
    .selectFrom('divinux.notificationAttempts')
    .select(['id as attemptId', 'organizationId', 'alertId', 'targetId', 'round', 'step'])
    .where('id', 'in', attemptIds)
    .where('status', '=', 'queued')
    .execute()
  const alerts = new Map(
    (
      await alertsByIds(
        db,
        attempts.map((attempt) => attempt.alertId),
      )
    ).map((alert) => [alert.id, alert]),
  )
  // An attempt whose alert is gone has nothing to post.
  return attempts.flatMap(({ alertId, ...attempt }) => {
    const alert = alerts.get(alertId)
    return alert ? [{ ...alert, ...attempt }] : []
  })
}

export type QueuedAttempt = Awaited<ReturnType<typeof queuedAttempts>>[number]

/** `settleAttempt` for several attempts, in one statement. */
export async function settleAttempts(
  db: Executor,
  settlements: ReadonlyArray<{ attemptId: string; status: 'queued' | 'sent' | 'failed'; error: string | null }>,
) {
  if (settlements.length === 0) return
  // `= any` lets the planner read the rows by key: it takes a recordset for 100 rows, and would
  // hash a scan of every attempt otherwise.
  await sql`
    update divinux.notification_attempts n
    set status = settled.status, error = settled.error, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(settlements)}::jsonb) as settled("attemptId" uuid, status text, error text)
    where n.id = settled."attemptId" and n.id = any(${settlements.map((settled) => settled.attemptId)}::uuid[])`.execute(db)
}

/** Records how an attempt the service makes itself (chat, webhook) went; `queued` keeps it for the job's next retry. */
export async function settleAttempt(db: Executor, attemptId: string, status: 'queued' | 'sent' | 'failed', error: string | null) {
  await db
    .updateTable('divinux.notificationAttempts')
    .set({ status, error, updatedAt: sql<Date>`now()` })
    .where('id', '=', attemptId)
    .execute()
}

/** The chat integrations a page about the alert reached. */
export async function chatsPagedAbout(db: Executor, organizationId: string, alertId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('divinux.notificationAttempts')
    .select('targetId')
    .distinct()
    .where('organizationId', '=', organizationId)
    .where('alertId', '=', alertId)
    .where('channel', '=', 'chat')
    .where('status', '=', 'sent')
    .execute()
  return rows.map((row) => row.targetId)
}

/**
 * Who was paged for these alerts, and by which channels that did not fail: each person and
 * channel once per alert (a resolution is told through them).
 */
export async function pagedPeopleOf(db: Executor, alertIds: string[]) {
  if (alertIds.length === 0) return []
  const rows = await db
    .selectFrom('divinux.notificationAttempts')
    .select(['alertId', 'userId', 'channel'])
    .distinct()
    .where('alertId', 'in', alertIds)
    .where('userId', 'is not', null)
    .where('channel', 'in', ['email', 'sms', 'voice', 'push'])
    .where('status', '<>', 'failed')
    .execute()
  return rows.flatMap((row) => (row.userId ? [{ alertId: row.alertId, userId: row.userId, channel: row.channel as PagingChannel }] : []))
}
