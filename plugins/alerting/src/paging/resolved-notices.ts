import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { pushRecipient } from '@svc/notifier'
import { alertsByIds, type AlertEventSubscriber, type AlertRow, type BusEvent } from '../alerts/index.js'
import { inQuietHours, type PagingChannel } from '../oncall/index.js'
import { pagingReads, type PagingDeps } from './page.js'
import { pagedPeopleOf } from './queries.js'

// Everyone paged is told when the alert resolves (decision 0014, "What a page says"), as
// PagerDuty tells its responders: through the channels that paged them, never by a call (a call
// to say it is over wakes someone for nothing), by e-mail alone in their quiet hours; not the
// person who resolved it; not anyone whose preferences say `whenResolved: false`.

type NoticeDeps = Pick<PagingDeps, 'notifier' | 'preferences' | 'contacts' | 'pushSubscriptions' | 'productUrl'>

/** Who or what resolved it, as the notice says: a person, the source, a recovered check, its incident. */
function resolvedBy(event: BusEvent, actorEmail: string | undefined): string {
  const data = (event.data ?? {}) as { source?: unknown; incidentId?: unknown; via?: unknown }
  if (actorEmail) return `by ${actorEmail}${typeof data.via === 'string' ? ` (${data.via})` : ''}`
  if (data.source === 'synthetics') return 'when its check recovered'
  if (typeof data.source === 'string') return `by its source (${data.source})`
  return 'by the system'
}

function noticeText(alert: AlertRow, event: BusEvent, by: string, links: { alert: string; incident?: string }, reference?: string) {
  return [
    `Resolved: [${alert.priority}] ${alert.title}`,
    '',
    `It resolved at ${event.createdAt.toISOString()}, ${by}.`,
    ...(reference && links.incident ? [`Incident: ${reference}: ${links.incident}`] : []),
    `The alert in the API (with a bearer token): ${links.alert}`,
    '',
    'You were paged for it. To stop these notices, PATCH /api/v1/users/me/notifications {"whenResolved": false}.',
  ].join('\n')
}

/** Tells the people paged for each resolved alert, in the bus's transaction (the outbox sends after it commits). */
export function resolvedNoticeSubscriber(deps: NoticeDeps): AlertEventSubscriber {
  return {
    // Resolutions only.
    wantsCreated: () => sql`false`,
    async handle(trx, events) {
      const resolved = events.filter((event) => event.type === 'resolved')
      if (resolved.length === 0) return false
      const paged = await pagedPeopleOf(
        trx,
        resolved.map((event) => event.alertId),
      )
      if (paged.length === 0) return false
      const alerts = new Map((await alertsByIds(trx, [...new Set(paged.map((row) => row.alertId))])).map((alert) => [alert.id, alert]))
      const reads = pagingReads(trx, deps)
      let queued = false
      for (const event of resolved) {
        const alert = alerts.get(event.alertId)
        if (!alert) continue
        const people = new Map<string, Set<PagingChannel>>()
        for (const row of paged)
          if (row.alertId === event.alertId && row.userId !== event.actorUserId && row.channel !== 'voice')
            people.set(row.userId, (people.get(row.userId) ?? new Set()).add(row.channel))
        if (people.size === 0) continue
        if (await tell(trx, deps, reads, alert, event, people)) queued = true
      }
      return queued
    },
    wake: () => deps.notifier.wake(),
  }
}

async function tell(
  trx: Executor,
  deps: NoticeDeps,
  reads: ReturnType<typeof pagingReads>,
  alert: AlertRow & { organizationId: string },
  event: BusEvent,
  people: Map<string, Set<PagingChannel>>,
): Promise<boolean> {
  const userIds = [...people.keys()]
  const preferences = await reads.preferences(userIds)
  const emails = await reads.emails(userIds)
  const verified = { email: await reads.addresses(userIds, 'email'), sms: await reads.addresses(userIds, 'sms') }
  const pushes = await reads.pushes(userIds)
  const actor = event.actorUserId ? (await reads.emails([event.actorUserId])).get(event.actorUserId) : undefined
  const incident = await reads.incident(alert.organizationId, alert.id, deps.productUrl)
  const links = {
    alert: `${deps.productUrl}/api/v1/organizations/${alert.organizationId}/alerts/${alert.id}`,
    ...(incident ? { incident: incident.url } : {}),
  }
  const subject = `Resolved: [${alert.priority}] ${alert.title}`
  const text = noticeText(alert, event, resolvedBy(event, actor), links, incident?.reference)
  const message = { organizationId: alert.organizationId, kind: 'alert.resolved' }
  let queued = false
  for (const [userId, channels] of people) {
    const chosen = preferences.get(userId)
    if (!chosen || chosen.whenResolved === false) continue
    const quiet = chosen.quietHours.enabled && inQuietHours(chosen.quietHours, event.createdAt)
    for (const channel of channels) {
      if (quiet && channel !== 'email') continue
      if (channel === 'email') {
        const to = (verified.email.get(userId) ?? [])[0] ?? chosen.channels.email.address ?? emails.get(userId)
        if (!to) continue
        await deps.notifier.queueMessage(trx, { ...message, channel, to, subject, text })
      } else if (channel === 'sms') {
        const to = (verified.sms.get(userId) ?? [])[0]
        if (!to) continue
        const service = alert.service ? ` (${alert.service})` : ''
        await deps.notifier.queueMessage(trx, {
          ...message,
          channel,
          to,
          text: `${subject}${service}${incident ? ` · ${incident.reference}` : ''}`,
        })
      } else if (channel === 'push') {
        const subscriptions = pushes.get(userId) ?? []
        if (subscriptions.length === 0) continue
        await deps.notifier.queueMessage(trx, {
          ...message,
          channel,
          to: pushRecipient(subscriptions),
          subject,
          text: JSON.stringify({
            title: subject.slice(0, 200),
            body: `${alert.service ?? 'no service'}${incident ? ` · ${incident.reference}` : ''} · resolved ${resolvedBy(event, actor)}`.slice(
              0,
              300,
            ),
            // The same tag as the page: the notice replaces it on the device.
            tag: `alert-${alert.id}`,
            requireInteraction: false,
            data: { alertId: alert.id, organizationId: alert.organizationId, priority: alert.priority, url: links.alert, resolved: true },
          }),
        })
      } else continue
      queued = true
    }
  }
  return queued
}
