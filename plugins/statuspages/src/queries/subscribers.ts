import { sql } from 'kysely'
import type { Executor, Page } from '@svc/db'
import { lockUntilCommit, paged } from '@svc/db'

const subscriberColumns = [
  'id',
  'pageId',
  'kind',
  'email',
  'phone',
  'url',
  'componentIds',
  'audienceIds',
  'locale',
  'confirmedAt',
  'createdAt',
] as const

export interface NewSubscriber {
  organizationId: string
  pageId: string
  kind: 'email' | 'webhook' | 'slack' | 'teams' | 'sms'
  email?: string | null
  phone?: string | null
  url?: string | null
  secret?: string | null
  componentIds: string[]
  /** The audiences it subscribed as (decision 0015, "Audiences"): it is told of what they see. */
  audienceIds?: string[]
  confirmTokenHash: string | null
  unsubscribeToken: string
  confirmedAt: Date | null
  confirmationSentAt?: Date | null
  /** The client address of a public subscription; unset for one a manager added. */
  createdFrom?: string | null
  /** The language of its e-mails; null: the page's default. */
  locale?: string | null
}

export async function listSubscribers(db: Executor, organizationId: string, pageId: string, page: Page) {
  return paged(
    db.selectFrom('divinux.statusSubscribers').where('organizationId', '=', organizationId).where('pageId', '=', pageId),
    (rows) => rows.select(subscriberColumns).orderBy('createdAt').orderBy('id'),
    page,
  )
}

export type SubscriberRow = Awaited<ReturnType<typeof listSubscribers>>['rows'][number]

export async function findSubscriber(db: Executor, organizationId: string, pageId: string, id: string) {
  return db
    .selectFrom('divinux.statusSubscribers')
    .select(subscriberColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/**
 * A subscriber's notifications, newest first, each with its delivery as the outbox (core.outbox,
 * the notifier's table) last recorded it: pending while it is retried, sent, delivered, or
 * failed with the reason.
 */
export async function listSubscriberNotifications(db: Executor, organizationId: string, pageId: string, subscriberId: string, page: Page) {
  return paged(
    db
      .selectFrom('divinux.statusNotifications as n')
      .innerJoin('divinux.statusSubscribers as s', 's.id', 'n.subscriberId')
      .innerJoin('divinux.statusIncidentUpdates as u', 'u.id', 'n.updateId')
      .innerJoin('divinux.statusIncidents as i', 'i.id', 'u.incidentId')
      .leftJoin('core.outbox as o', 'o.id', 'n.messageId')
      .where('s.organizationId', '=', organizationId)
      .where('s.pageId', '=', pageId)
      .where('n.subscriberId', '=', subscriberId),
    (rows) =>
      rows
        .select([
          'n.messageId',
          'n.updateId',
          'n.createdAt',
          'i.id as incidentId',
          'i.kind',
          'i.name',
          'u.status as updateStatus',
          'o.kind as messageKind',
          'o.status',
          'o.attempts',
          'o.lastError',
          'o.sentAt',
          'o.updatedAt',
        ])
        .orderBy('n.createdAt', 'desc')
        .orderBy('n.updateId'),
    page,
  )
}

/**
 * The page's e-mail subscriber with this address (any letter case), its SMS subscriber of this
 * number, or its subscriber of this kind with this URL.
 */
export async function existingSubscriber(
  db: Executor,
  pageId: string,
  target: { email: string } | { phone: string } | { url: string; kind: 'webhook' | 'slack' | 'teams' },
) {
  let query = db
    .selectFrom('divinux.statusSubscribers')
    .select([...subscriberColumns, 'unsubscribeToken', 'confirmationSentAt'])
    .where('pageId', '=', pageId)
  query =
    'email' in target
      ? query.where('kind', '=', 'email').where((eb) => eb(eb.fn('lower', ['email']), '=', target.email.toLowerCase()))
      : 'phone' in target
        ? query.where('kind', '=', 'sms').where('phone', '=', target.phone)
        : query.where('kind', '=', target.kind).where('url', '=', target.url)
  return query.forUpdate().executeTakeFirst()
}

export async function insertSubscriber(db: Executor, subscriber: NewSubscriber) {
  return db.insertInto('divinux.statusSubscribers').values(subscriber).returning(subscriberColumns).executeTakeFirstOrThrow()
}

/**
 * A new confirmation token for an unconfirmed e-mail subscriber (the earlier one stops working),
 * sent now: the resend window starts again from this send. A `locale` (asked for again, maybe in
 * another language this time) replaces the stored one, and so do the audiences it subscribes as.
 */
export async function renewConfirmation(
  db: Executor,
  id: string,
  confirmTokenHash: string,
  locale: string | null,
  audienceIds: string[],
): Promise<void> {
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ confirmTokenHash, confirmAttempts: 0, confirmationSentAt: sql<Date>`now()`, audienceIds, ...(locale ? { locale } : {}) })
    .where('id', '=', id)
    .where('confirmedAt', 'is', null)
    .execute()
}

/** Confirms the page's subscriber holding this confirmation token; answers it, or undefined for an unknown token. */
export async function confirmSubscriber(db: Executor, pageId: string, confirmTokenHash: string) {
  return db
    .updateTable('divinux.statusSubscribers')
    .set({ confirmedAt: new Date(), confirmTokenHash: null })
    .where('pageId', '=', pageId)
    .where('confirmTokenHash', '=', confirmTokenHash)
    .returning(['id', 'pageId', 'organizationId', 'email'])
    .executeTakeFirst()
}

/**
 * Confirms the page's SMS subscriber of `phone` when `codeHash` is its code's, sent within
 * `validMs`; a wrong code counts against it, and after `attempts` wrong ones it confirms nothing.
 */
export async function confirmSmsSubscriber(
  db: Executor,
  pageId: string,
  phone: string,
  codeHash: string,
  limits: { validMs: number; attempts: number },
): Promise<'confirmed' | 'wrong' | 'spent'> {
  const pending = await db
    .selectFrom('divinux.statusSubscribers')
    .select(['id', 'confirmTokenHash', 'confirmAttempts'])
    .where('pageId', '=', pageId)
    .where('kind', '=', 'sms')
    .where('phone', '=', phone)
    .where('confirmedAt', 'is', null)
    .where('confirmationSentAt', '>', sql<Date>`now() - make_interval(secs => ${limits.validMs / 1000})`)
    .forUpdate()
    .executeTakeFirst()
  if (!pending) return 'wrong'
  if (pending.confirmAttempts >= limits.attempts) return 'spent'
  if (pending.confirmTokenHash !== codeHash) {
    await db
      .updateTable('divinux.statusSubscribers')
      .set({ confirmAttempts: sql<number>`confirm_attempts + 1` })
      .where('id', '=', pending.id)
      .execute()
    return pending.confirmAttempts + 1 >= limits.attempts ? 'spent' : 'wrong'
  }
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ confirmedAt: new Date(), confirmTokenHash: null })
    .where('id', '=', pending.id)
    .execute()
  return 'confirmed'
}

/** A number that texted STOP: its SMS subscriptions end, on every page; answers how many. */
export async function endSmsSubscriptions(db: Executor, phone: string): Promise<number> {
  const ended = await db
    .deleteFrom('divinux.statusSubscribers')
    .where('kind', '=', 'sms')
    .where('phone', '=', phone)
    .returning('id')
    .execute()
  return ended.length
}

export async function deleteSubscriber(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('divinux.statusSubscribers').where('id', '=', id).execute()
}

/** The page's subscriber holding this unsubscribe token, if any. */
export async function subscriberOfUnsubscribeToken(db: Executor, pageId: string, unsubscribeToken: string) {
  return db
    .selectFrom('divinux.statusSubscribers')
    .select(['id'])
    .where('pageId', '=', pageId)
    .where('unsubscribeToken', '=', unsubscribeToken)
    .executeTakeFirst()
}

/** Removes the subscriber holding this unsubscribe token; answers it, or undefined for an unknown token. */
export async function unsubscribe(db: Executor, unsubscribeToken: string) {
  return db
    .deleteFrom('divinux.statusSubscribers')
    .where('unsubscribeToken', '=', unsubscribeToken)
    .returning(['id', 'pageId', 'organizationId', 'kind'])
    .executeTakeFirst()
}

/**
 * Claims up to `limit` confirmed subscribers of a page an update has not been sent to yet, those
 * following one of `componentIds` or every component, and subscribed before the update was posted
 * (a late job does not tell newcomers old news): each is recorded with its message's id, so a job
 * that runs twice sends nothing twice.
 */
export async function claimRecipients(
  db: Executor,
  update: { id: string; audienceIds: string[] },
  pageId: string,
  componentIds: string[],
  newMessageId: () => string,
  limit: number,
) {
  const updateId = update.id
  // The update's own time, read in the database: a JavaScript Date keeps milliseconds, PostgreSQL
  // microseconds, so a subscriber confirmed in the same millisecond before the update counts.
  const postedAt = sql<Date>`(select u.created_at from divinux.status_incident_updates u where u.id = ${updateId})`
  const following = sql<boolean>`(cardinality(s.component_ids) = 0 or s.component_ids && ${sql.val(componentIds)}::uuid[])`
  // A record tagged for audiences goes only to subscribers of one of them (decision 0015, "Audiences").
  const seen = sql<boolean>`(cardinality(${sql.val(update.audienceIds)}::uuid[]) = 0 or s.audience_ids && ${sql.val(update.audienceIds)}::uuid[])`
  const candidates = await db
    .selectFrom('divinux.statusSubscribers as s')
    .select(['s.id', 's.kind', 's.email', 's.phone', 's.unsubscribeToken', 's.componentIds', 's.audienceIds', 's.locale'])
    .where('s.pageId', '=', pageId)
    // An update goes to those subscribed, confirmed, when it was posted: one confirmed later does not
    // receive the earlier updates a later job writes first (notifications.ts, in order per incident).
    .where('s.confirmedAt', '<=', postedAt)
    .where('s.createdAt', '<=', postedAt)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('divinux.statusNotifications as n')
            .select('n.updateId')
            .where('n.updateId', '=', updateId)
            .whereRef('n.subscriberId', '=', 's.id'),
        ),
      ),
    )
    .where(following)
    .where(seen)
    .orderBy('s.id')
    .limit(limit)
    .execute()
  const recipients = candidates.map((subscriber) => ({ ...subscriber, messageId: newMessageId() }))
  if (recipients.length === 0) return []
  const claimed = await db
    .insertInto('divinux.statusNotifications')
    .values(recipients.map((recipient) => ({ updateId, subscriberId: recipient.id, messageId: recipient.messageId })))
    .onConflict((oc) => oc.columns(['updateId', 'subscriberId']).doNothing())
    .returning('subscriberId')
    .execute()
  const mine = new Set(claimed.map((row) => row.subscriberId))
  return recipients.filter((recipient) => mine.has(recipient.id))
}

/** A URL subscriber's URL and kind, and a webhook's secret, for the notifier's webhook provider. */
export async function webhookTargetOf(db: Executor, subscriberId: string) {
  return db
    .selectFrom('divinux.statusSubscribers')
    .select(['kind', 'url', 'secret'])
    .where('id', '=', subscriberId)
    .where('kind', 'in', ['webhook', 'slack', 'teams'])
    .executeTakeFirst()
}

/** Serializes a page's new subscriptions until the caller's transaction ends, so its caps hold under races. */
export async function lockPageSubscriptions(db: Executor, pageId: string): Promise<void> {
  await lockUntilCommit(db, `subscriptions:${pageId}`)
}

/**
 * What the public subscription caps count: the page's unconfirmed e-mail subscribers sent a link
 * in the last day, the page's URL subscribers (webhooks, Slack and Teams channels) that came from
 * the public form, and those this client address added (to any page) in the last day.
 */
export async function publicSubscriptionCounts(db: Executor, pageId: string, address: string) {
  const row = await sql<{ pendingConfirmations: number; publicWebhooks: number; webhooksPerAddress: number }>`
    select
      (select count(*) from divinux.status_subscribers where page_id = ${pageId} and kind in ('email', 'sms') and confirmed_at is null
        and confirmation_sent_at > now() - interval '1 day')::int as "pendingConfirmations",
      (select count(*) from divinux.status_subscribers where page_id = ${pageId} and kind in ('webhook', 'slack', 'teams')
        and created_from is not null)::int as "publicWebhooks",
      (select count(*) from divinux.status_subscribers where kind in ('webhook', 'slack', 'teams') and created_from = ${address}::inet
        and created_at > now() - interval '1 day')::int as "webhooksPerAddress"`.execute(db)
  return row.rows[0] ?? { pendingConfirmations: 0, publicWebhooks: 0, webhooksPerAddress: 0 }
}
