import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { lockUntilCommit, type Database, type Executor } from '@svc/db'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import type { Notifier, OutboundMessageRequest } from '@svc/notifier'
import { dateTime } from '../i18n/format.js'
import { messagesOf } from '../i18n/locales.js'
import type { Messages } from '../i18n/messages.js'
import {
  bannerStatusOf,
  overallStatus,
  type ComponentStatus,
  type IncidentImpact,
  type IncidentStatus,
  type MaintenanceStatus,
} from '../model.js'
import { publicUrlOf } from '../pages/public-url.js'
import { incidentComponents } from '../queries/incidents.js'
import { isSeenBy } from '../queries/audiences.js'
import { pageComponents, seenComponents } from '../queries/public.js'
import { claimRecipients } from '../queries/subscribers.js'
import { slackUpdate, teamsUpdate, type ChatUpdate } from './chat-messages.js'
import type { AffectedComponentRecord } from '../schemas.js'

export const NOTIFY_QUEUE = 'statuspages.notify'
/** Recipients claimed, and their outbox messages written, per transaction. */
export const RECIPIENTS_PER_BATCH = 500
/** An SMS notification's length: two segments of GSM-7 (153 characters each once concatenated). */
const SMS_LENGTH = 306
/** How a webhook subscriber is named in the outbox; the notifier asks this surface for its URL and secret. */
export const SUBSCRIBER_RECIPIENT = 'status-subscriber:'

interface NotifyJob {
  updateId: string
}

export interface SubscriberNotificationsOptions {
  database: Database
  jobs: JobQueue
  notifier: Notifier
  productUrl: string
  log: FastifyBaseLogger
}

/** What subscribers are told an update is, in webhook event types. */
function eventOf(kind: string, status: string, first: boolean): string {
  if (kind === 'incident') return status === 'resolved' ? 'incident.resolved' : first ? 'incident.created' : 'incident.updated'
  if (first && status === 'scheduled') return 'maintenance.scheduled'
  return (
    { in_progress: 'maintenance.started', completed: 'maintenance.completed', cancelled: 'maintenance.cancelled' }[status] ??
    'maintenance.updated'
  )
}

async function updateToSend(db: Executor, updateId: string) {
  return db
    .selectFrom('divinux.statusIncidentUpdates as u')
    .innerJoin('divinux.statusIncidents as i', 'i.id', 'u.incidentId')
    .innerJoin('divinux.statusPages as p', 'p.id', 'i.pageId')
    .select([
      'u.id',
      'u.status',
      'u.body',
      'u.displayAt',
      'u.affectedComponents',
      'u.createdAt',
      'i.id as incidentId',
      'i.kind',
      'i.name',
      'i.status as incidentStatus',
      'i.impact',
      'i.published',
      'i.startedAt',
      'i.resolvedAt',
      'i.audienceIds',
      'i.scheduledFor',
      'i.scheduledUntil',
      'p.id as pageId',
      'p.organizationId',
      'p.name as pageName',
      'p.footerText',
      'p.slug',
      'p.timeZone',
      'p.locales',
      // Links name the custom domain only once it is verified (decision 0015, "Custom domains").
      sql<string | null>`case when p.custom_domain_verified_at is not null then p.custom_domain end`.as('customDomain'),
      'p.published as pagePublished',
      'p.bannerFollowsChecks',
      (eb) =>
        eb
          .selectFrom('divinux.statusIncidentUpdates as earlier')
          .select((inner) => inner.fn.countAll<number>().as('n'))
          .whereRef('earlier.incidentId', '=', 'u.incidentId')
          .whereRef('earlier.createdAt', '<', 'u.createdAt')
          .as('earlierUpdates'),
    ])
    .where('u.id', '=', updateId)
    .executeTakeFirst()
}

/**
 * Subscriber notifications (issue 15): every published update of a published page's incident or
 * maintenance is sent to the page's confirmed subscribers (those following every component or one
 * the record names), e-mail and SMS through the outbox, and webhooks (signed per Standard Webhooks)
 * and Slack and Teams channels (chat-messages.ts) through the outbox's webhook provider. Queued in the
 * transaction of the update, sent by a job that records each recipient, so nothing is sent twice.
 */
export function createSubscriberNotifications(options: SubscriberNotificationsOptions) {
  const { database, jobs, notifier, log } = options
  const productUrl = options.productUrl.replace(/\/$/, '')

  /**
   * One batch of recipients, in a transaction of its own; answers how many were sent to. A
   * subscriber hears of one incident in the order of its updates, retries included (issue 51:
   * three updates written back to back were delivered created, resolved, updated): under a lock on
   * the incident, the oldest of its updates up to this one that is still owed to someone is
   * written first. Jobs of one incident's updates so write their messages one after the other,
   * and the outbox sends each receiver's messages in the order written (decision 0011, "Order").
   */
  async function notifyBatch(updateId: string): Promise<number> {
    return database.db.transaction().execute(async (trx) => {
      const target = await trx
        .selectFrom('divinux.statusIncidentUpdates')
        .select('incidentId')
        .where('id', '=', updateId)
        .executeTakeFirst()
      if (!target) return 0
      await lockUntilCommit(trx, `statuspages.notify:${target.incidentId}`)
      // Compared in the database: a JavaScript Date keeps milliseconds, PostgreSQL microseconds.
      const inOrder = await trx
        .selectFrom('divinux.statusIncidentUpdates as earlier')
        .innerJoin('divinux.statusIncidentUpdates as target', 'target.incidentId', 'earlier.incidentId')
        .select('earlier.id')
        .where('target.id', '=', updateId)
        .whereRef('earlier.createdAt', '<=', 'target.createdAt')
        .orderBy('earlier.createdAt')
        .orderBy('earlier.id')
        .execute()
      for (const { id } of inOrder) {
        const written = await writeBatch(trx, id)
        if (written > 0) return written
      }
      return 0
    })
  }

  /** One batch of one update's recipients, claimed and written to the outbox in `trx`. */
  async function writeBatch(trx: Executor, updateId: string): Promise<number> {
    const update = await updateToSend(trx, updateId)
    if (!update || !update.published || !update.pagePublished) return 0
    const named = (await incidentComponents(trx, [update.incidentId])).map((row) => row.componentId)
    const recipients = await claimRecipients(trx, update, update.pageId, named, randomUUID, RECIPIENTS_PER_BATCH)
    if (recipients.length === 0) return 0
    const everything = await pageComponents(trx, update.pageId)
    const unresolved = await trx
      .selectFrom('divinux.statusIncidents')
      .select(['impact', 'audienceIds'])
      .where('pageId', '=', update.pageId)
      .where('kind', '=', 'incident')
      .where('published', '=', true)
      .where('status', '<>', 'resolved')
      .execute()
    const pageUrl = publicUrlOf(productUrl, update)
    const event = eventOf(update.kind, update.status, Number(update.earlierUpdates) === 0)
    const allAffected = update.affectedComponents as unknown as AffectedComponentRecord[]
    /**
     * The update as subscribers of some audiences see it (decision 0015, "Audiences"): the page's
     * status from what they see, and only the components they see named.
     */
    const views = new Map<string, ReturnType<typeof viewFor>>()
    const viewFor = (audienceIds: readonly string[], key: string) => {
      const content = seenComponents(everything, audienceIds)
      const seen = new Set(content.components.map((component) => component.id))
      const hidden = (id: string) => !seen.has(id) && everything.components.some((component) => component.id === id)
      return {
        key,
        pageStatus: overallStatus(
          content.components.map((component) => bannerStatusOf(component, update)),
          unresolved.filter((row) => isSeenBy(audienceIds, row.audienceIds)).map((row) => row.impact as IncidentImpact),
        ),
        components: content.components.filter((component) => named.includes(component.id)),
        affected: allAffected.filter((change) => !hidden(change.code)),
      }
    }
    type View = ReturnType<typeof viewFor>
    const viewOf = (audienceIds: readonly string[]): View => {
      const key = [...audienceIds].sort().join(',')
      let view = views.get(key)
      if (!view) views.set(key, (view = viewFor(audienceIds, key)))
      return view
    }
    const unsubscribeUrl = (token: string, locale?: string) =>
      `${productUrl}/api/v1/statuspages/public/${update.slug}/subscribers/unsubscribe?token=${token}${locale && update.locales.length > 1 ? `&locale=${locale}` : ''}`
    /** The update's status in words, and the lines under it: the components it names, a maintenance's window. */
    const wordsIn = (t: Messages, { components }: View) => ({
      words: t.progress[update.status as IncidentStatus | MaintenanceStatus] ?? update.status,
      details: [
        ...(components.length > 0
          ? [
              t.email.components(
                components.map((component) => `${component.name} (${t.componentStatus[component.status as ComponentStatus]})`).join(', '),
              ),
            ]
          : []),
        ...(update.scheduledFor && update.scheduledUntil
          ? [t.email.window(dateTime(t, update.scheduledFor, update.timeZone), dateTime(t, update.scheduledUntil, update.timeZone))]
          : []),
      ],
    })
    /** The e-mail of this update in one language, but for the recipient's unsubscribe link. */
    const emailIn = (t: Messages, view: View) => {
      const { words, details } = wordsIn(t, view)
      const head = [
        update.name,
        `${words}: ${update.body}`,
        '',
        ...details,
        t.email.statusPage(pageUrl),
        '',
        // The page's own footer (decision 0015, "Branding"), as plain text.
        ...(update.footerText ? [update.footerText, ''] : []),
      ].join('\n')
      return {
        subject: `[${update.pageName}] ${update.name}: ${words}`,
        text: (token: string) => `${head}\n${t.email.footer(update.pageName, unsubscribeUrl(token, t.language))}`,
        unsubscribeUrl: (token: string) => unsubscribeUrl(token, t.language),
      }
    }
    // Each subscriber reads their language while the page still offers it, else the page's default.
    const languageOf = (locale: string | null) => (locale && update.locales.includes(locale) ? locale : (update.locales[0] ?? 'en'))
    const emails = new Map<string, ReturnType<typeof emailIn>>()
    const emailFor = (locale: string | null, view: View) => {
      const language = languageOf(locale)
      let email = emails.get(`${language}|${view.key}`)
      if (!email) emails.set(`${language}|${view.key}`, (email = emailIn(messagesOf(language), view)))
      return email
    }
    /**
     * A text of this update in the subscriber's language: the page, the name, the status and as
     * much of the body as fits two SMS segments beside the page's address and how to stop.
     */
    const smsText = (locale: string | null) => {
      const t = messagesOf(languageOf(locale))
      const tail = ` ${pageUrl} ${t.sms.stop}`
      const head = `[${update.pageName}] ${update.name}: ${t.progress[update.status as IncidentStatus | MaintenanceStatus] ?? update.status}. ${update.body}`
      const room = SMS_LENGTH - tail.length
      return `${head.length > room ? `${head.slice(0, Math.max(0, room - 1))}…` : head}${tail}`
    }
    /** A Slack or Teams channel's post of this update, in its language, with its own unsubscribe link. */
    const chatPost = (kind: 'slack' | 'teams', locale: string | null, token: string, view: View) => {
      const t = messagesOf(languageOf(locale))
      const { words, details } = wordsIn(t, view)
      const post: ChatUpdate = {
        pageName: update.pageName,
        title: update.name,
        status: words,
        body: update.body,
        details,
        pageUrl,
        unsubscribe: { label: t.answers.unsubscribeButton, url: unsubscribeUrl(token, t.language) },
      }
      return JSON.stringify(kind === 'slack' ? slackUpdate(post) : teamsUpdate(post))
    }
    const payload = (token: string, { pageStatus, components, affected }: View) =>
      JSON.stringify({
        type: event,
        timestamp: new Date().toISOString(),
        data: {
          page: {
            id: update.pageId,
            name: update.pageName,
            url: pageUrl,
            status_indicator: pageStatus.indicator,
            status_description: pageStatus.description,
          },
          [update.kind === 'maintenance' ? 'scheduled_maintenance' : 'incident']: {
            id: update.incidentId,
            name: update.name,
            status: update.incidentStatus,
            impact: update.impact,
            started_at: update.startedAt.toISOString(),
            resolved_at: update.resolvedAt?.toISOString() ?? null,
            ...(update.kind === 'maintenance'
              ? {
                  scheduled_for: update.scheduledFor?.toISOString() ?? null,
                  scheduled_until: update.scheduledUntil?.toISOString() ?? null,
                }
              : {}),
            shortlink: `${pageUrl}#${update.kind}-${update.incidentId}`,
            components: components.map((component) => ({ id: component.id, name: component.name, status: component.status })),
          },
          incident_update: {
            id: update.id,
            status: update.status,
            body: update.body,
            display_at: update.displayAt.toISOString(),
            affected_components: affected.map((change) => ({
              code: change.code,
              name: change.name,
              old_status: change.oldStatus,
              new_status: change.newStatus,
            })),
          },
          meta: { unsubscribe: unsubscribeUrl(token) },
        },
      })
    const messages = recipients.map((recipient): OutboundMessageRequest & { id: string } => {
      const view = viewOf(recipient.audienceIds)
      if (recipient.kind === 'sms')
        return {
          id: recipient.messageId,
          organizationId: update.organizationId,
          channel: 'sms',
          kind: `statuspage.${event}`,
          to: recipient.phone ?? '',
          text: smsText(recipient.locale),
        }
      if (recipient.kind !== 'email')
        return {
          id: recipient.messageId,
          organizationId: update.organizationId,
          // Through the notifier's webhook provider, which asks this surface for the URL (and a
          // webhook's secret) at each attempt.
          channel: 'webhook',
          kind: `statuspage.${event}`,
          to: `${SUBSCRIBER_RECIPIENT}${recipient.id}`,
          text:
            recipient.kind === 'slack' || recipient.kind === 'teams'
              ? chatPost(recipient.kind, recipient.locale, recipient.unsubscribeToken, view)
              : payload(recipient.unsubscribeToken, view),
        }
      const email = emailFor(recipient.locale, view)
      return {
        id: recipient.messageId,
        organizationId: update.organizationId,
        channel: 'email',
        kind: `statuspage.${event}`,
        to: recipient.email ?? '',
        subject: email.subject,
        text: email.text(recipient.unsubscribeToken),
        // The mail client's own unsubscribe button (List-Unsubscribe), one click, as the footer's link.
        unsubscribeUrl: email.unsubscribeUrl(recipient.unsubscribeToken),
      }
    })
    await notifier.queueMessages(trx, messages)
    return messages.length
  }

  /**
   * Every recipient of an update, in batches: a page with many subscribers is not written in
   * one long transaction, and a batch that committed is not sent again when the job is retried.
   */
  async function notify(updateId: string): Promise<void> {
    let sent = 0
    for (;;) {
      const batch = await notifyBatch(updateId)
      sent += batch
      if (batch === 0) break
      notifier.wake()
    }
    if (sent > 0) log.info({ updateId, sent }, 'status page subscribers notified')
  }

  return {
    /** Queues the update's notifications in the caller's transaction (sent once it commits). */
    async queue(db: Executor, updateId: string): Promise<void> {
      await jobs.send(NOTIFY_QUEUE, { updateId } satisfies NotifyJob, { db: inTransaction(db), singletonKey: updateId })
    },
    async start(): Promise<void> {
      await ensureQueue(jobs, NOTIFY_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
      await workEach<NotifyJob>(jobs, NOTIFY_QUEUE, { batchSize: 5, pollingIntervalSeconds: 1 }, (job) => notify(job.data.updateId))
    },
    stop: () => jobs.offWork(NOTIFY_QUEUE),
  }
}

export type SubscriberNotifications = ReturnType<typeof createSubscriberNotifications>
