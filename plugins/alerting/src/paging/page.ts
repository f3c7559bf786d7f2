import { randomBytes, randomInt } from 'node:crypto'
import type { Executor } from '@svc/db'
import { pushRecipient, type Notifier } from '@svc/notifier'
import { hashSecret } from '@svc/auth'
import { type AlertRow } from '../alerts/index.js'
import { insertAttempt } from './queries.js'
import { incidentOfAlert, incidentsOfAlerts, type LatestAnalysisReader, type LinkedIncident } from '../incidents/index.js'
import { CHAT_QUEUE } from './queues.js'
import {
  activeMembersAmong,
  type CatalogEntry,
  catalogEntriesOf,
  catalogEntryOf,
  type ContactReader,
  emailsOf,
  onCallUsers,
  type PagingChannel,
  planFor,
  type PreferencesReader,
  type PushReader,
  supportHoursOf,
  type Target,
  teamResponders,
  urgencyOf,
} from '../oncall/index.js'
import type { StepWrites } from './step-writes.js'

/** How long an acknowledgement link works. */
export const ACK_LINK_HOURS = 24

export interface PagingDeps {
  notifier: Notifier
  /** Writes a webhook attempt's delivery (event alert.escalated) and sends its job, in the caller's transaction. */
  queueWebhook: (
    db: Executor,
    page: { organizationId: string; webhookId: string; attemptId: string; alert: AlertRow; position: StepPosition },
  ) => Promise<void>
  preferences: PreferencesReader
  contacts: ContactReader
  pushSubscriptions: PushReader
  /** Where links in messages point: the product API's public base URL. */
  productUrl: string
  /** The alert's latest analysis, for the on-call agent's brief in pages after the first step (insights). */
  latestAnalysis?: LatestAnalysisReader
}

export interface StepPosition {
  round: number
  step: number
  policyName: string
}

const NO_SUBSCRIPTION = 'no web-push subscription: subscribe a browser at /api/v1/users/me/contact-methods'
const noPhone = (channel: 'sms' | 'voice') =>
  `no verified phone number for ${channel === 'sms' ? 'SMS' : 'voice'}: add one at /api/v1/users/me/contact-methods`

/** An attempt's status while its message is on its way, or failed when no provider can carry it. */
const carried = (queued: { messageId: string; held: string | undefined }) => ({
  outboxMessageId: queued.messageId,
  status: queued.held ? ('failed' as const) : ('queued' as const),
  error: queued.held ?? null,
})

/** An acknowledgement link's token as stored: only its SHA-256. */
export const ackTokenHash = hashSecret

interface AckLink {
  url: string
  /** Six digits a reply `ack <code>` names. */
  smsCode: string
}

function newAckLink(writes: StepWrites, deps: PagingDeps, alert: AlertRow, organizationId: string, userId: string, now: Date): AckLink {
  const token = randomBytes(32).toString('base64url')
  const smsCode = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const expiresAt = new Date(now.getTime() + ACK_LINK_HOURS * 3_600_000)
  writes.ackLink({ tokenHash: ackTokenHash(token), organizationId, alertId: alert.id, userId, expiresAt, smsCode })
  return { url: `${deps.productUrl}/api/v1/alerts/ack/${token}`, smsCode }
}

/** The incident a page's alert is in, as the page names it. */
interface PagedIncident {
  reference: string
  title: string
  status: string
  url: string
}

/** The incident as a page names it, where the alert is in one. */
function pagedIncident(found: LinkedIncident | undefined, organizationId: string, productUrl: string): PagedIncident | undefined {
  return found
    ? {
        reference: `INC-${found.number}`,
        title: found.title,
        status: found.status,
        url: `${productUrl}/api/v1/organizations/${organizationId}/incidents/${found.id}`,
      }
    : undefined
}

/** An SMS stays within one segment where it can: priority, title, service, how to acknowledge, its incident. */
function pageSms(alert: AlertRow, ack: AckLink, incident: PagedIncident | undefined) {
  const service = alert.service ? ` (${alert.service})` : ''
  return `[${alert.priority}] ${alert.title}${service}. Reply "ack ${ack.smsCode}" to acknowledge, or open ${ack.url}${incident ? ` · ${incident.reference}` : ''}`
}

/** What the call says; the keypress prompt is added by the call's TwiML (Twilio routes). */
function pageVoice(alert: AlertRow) {
  const priority = alert.priority.split('').join(' ')
  return `This is an alert of priority ${priority}: ${alert.title}.${alert.service ? ` Service: ${alert.service}.` : ''}`
}

/**
 * A push page: what the web application's service worker shows (`showNotification(title,
 * {body, tag, requireInteraction, data, actions})`); its `acknowledge` action POSTs `data.ackUrl`.
 * The tag makes a later page of the same alert replace the earlier one on the device.
 */
function pagePush(
  alert: AlertRow,
  organizationId: string,
  position: StepPosition,
  links: { alert: string; ack: string },
  brief: string[] | null,
  incident: PagedIncident | undefined,
) {
  const where = `${alert.service ?? 'no service'}${incident ? ` · ${incident.reference}` : ''} · ${position.policyName}, step ${position.step + 1}`
  return JSON.stringify({
    title: `[${alert.priority}] ${alert.title}`.slice(0, 200),
    body: (brief ? `${brief[1]}\n${where}` : where).slice(0, 300),
    tag: `alert-${alert.id}`,
    requireInteraction: true,
    data: {
      alertId: alert.id,
      organizationId,
      priority: alert.priority,
      url: links.alert,
      ackUrl: links.ack,
      ...(incident ? { incident: incident.reference, incidentUrl: incident.url } : {}),
    },
    actions: [{ action: 'acknowledge', title: 'Acknowledge' }],
  })
}

/** At most this many labels in an e-mail page: the rest are on the alert. */
const LABELS_IN_PAGE = 20

/** An alert's labels as a page lists them: sorted, `key=value`, at most LABELS_IN_PAGE. */
function labelLines(labels: Record<string, string>): string[] {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))
  if (entries.length === 0) return []
  const shown = entries.slice(0, LABELS_IN_PAGE).map(([key, value]) => `  ${key}=${value}`)
  const more = entries.length > LABELS_IN_PAGE ? [`  … and ${entries.length - LABELS_IN_PAGE} more on the alert`] : []
  return ['Labels:', ...shown, ...more]
}

/**
 * An e-mail page: what is wrong and where (priority, service, source, the incident it is in),
 * what the sender says to do (its runbook) and where to look (the source's own view, the labels),
 * then how to acknowledge.
 */
function pageEmail(
  alert: AlertRow,
  organizationId: string,
  position: StepPosition,
  links: { alert: string; ack: string },
  brief: string[] | null,
  incident: PagedIncident | undefined,
  service: CatalogEntry | undefined,
) {
  const subject = `[${alert.priority}] ${alert.title}`
  // The catalog's runbook where the sender gave none, and who owns the service.
  const runbook = alert.runbookUrl ?? service?.runbook ?? null
  const about = service
    ? [service.ownerTeam && `owned by ${service.ownerTeam}`, service.tier && `tier ${service.tier}`].filter(Boolean)
    : []
  const text = [
    subject,
    '',
    ...(brief ? [...brief, ''] : []),
    ...(incident ? [`Incident: ${incident.reference} "${incident.title}" (${incident.status}): ${incident.url}`] : []),
    `Priority: ${alert.priority}`,
    `Service: ${alert.service ?? 'not given'}${about.length > 0 ? ` (${about.join(', ')})` : ''}`,
    `Source: ${alert.source}`,
    ...(runbook ? [`Runbook: ${runbook}`] : []),
    ...(alert.sourceUrl ? [`In the source: ${alert.sourceUrl}`] : []),
    ...(alert.description ? ['', alert.description] : []),
    ...(Object.keys(alert.labels as object).length > 0 ? ['', ...labelLines(alert.labels as Record<string, string>)] : []),
    '',
    // The first link opens in a browser without signing in (its token is the credential); the
    // second is the API's resource, for a client holding a token.
    `See the alert and acknowledge it (one use, within ${ACK_LINK_HOURS} hours): ${links.ack}`,
    `The alert in the API (with a bearer token): ${links.alert}`,
    '',
    `You are paged by the escalation policy "${position.policyName}", step ${position.step + 1}${position.round > 0 ? `, round ${position.round + 1}` : ''}.`,
  ].join('\n')
  return { organizationId, kind: 'alert.page', subject, text }
}

/**
 * What a step reads about people, remembered for one transaction: a burst of alerts paging the
 * same on-call person (the common case) reads her preferences, addresses and numbers once per
 * batch, not once per alert. Nothing a step writes changes these reads.
 */
export function pagingReads(db: Executor, deps: Pick<PagingDeps, 'preferences' | 'contacts' | 'pushSubscriptions' | 'latestAnalysis'>) {
  const remembered = new Map<string, Promise<unknown>>()
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let found = remembered.get(key) as Promise<T> | undefined
    if (!found) remembered.set(key, (found = read()))
    return found
  }
  const keyOf = (ids: string[]) => [...ids].sort().join(',')
  return {
    onCall: (organizationId: string, scheduleIds: string[], at: Date) =>
      once(`on-call:${organizationId}:${keyOf(scheduleIds)}:${at.getTime()}`, () => onCallUsers(db, organizationId, scheduleIds, at)),
    responders: (organizationId: string, teamIds: string[]) =>
      once(`responders:${organizationId}:${keyOf(teamIds)}`, () => teamResponders(db, organizationId, teamIds)),
    active: (organizationId: string, userIds: string[]) =>
      once(`active:${organizationId}:${keyOf(userIds)}`, () => activeMembersAmong(db, organizationId, userIds)),
    preferences: (userIds: string[]) => once(`preferences:${keyOf(userIds)}`, () => deps.preferences(db, userIds)),
    emails: (userIds: string[]) => once(`emails:${keyOf(userIds)}`, () => emailsOf(db, userIds)),
    addresses: (userIds: string[], channel: 'email' | 'sms' | 'voice') =>
      once(`addresses:${channel}:${keyOf(userIds)}`, () => deps.contacts.verifiedAddressesOf(db, userIds, channel)),
    pushes: (userIds: string[]) => once(`pushes:${keyOf(userIds)}`, () => deps.pushSubscriptions(db, userIds)),
    /** The on-call agent's two lines about the alert, once its analysis has them. */
    brief: (organizationId: string, alertId: string) =>
      once(`brief:${alertId}`, async () =>
        deps.latestAnalysis
          ? ((await deps.latestAnalysis(db, organizationId, { sourceProduct: 'alerting', incidentId: alertId }))?.oncall ?? null)
          : null,
      ),
    /** The catalog's entry for the service the alert names, if it knows it. */
    service: (organizationId: string, name: string | null) =>
      name === null
        ? Promise.resolve(undefined)
        : once(`service:${organizationId}:${name}`, () => catalogEntryOf(db, organizationId, name)),
    /** The incident the alert is in, as a page names it. */
    incident: (organizationId: string, alertId: string, productUrl: string) =>
      once(`incident:${alertId}`, async () =>
        pagedIncident(await incidentOfAlert(db, organizationId, alertId), organizationId, productUrl),
      ),
    /**
     * Reads the incidents and catalog entries of a batch of alerts about to be paged, an
     * organization at a time, in a statement each: a starter's batch of fifty makes two reads,
     * not one or two an alert.
     */
    async prefetch(alerts: Array<{ id: string; organizationId: string; service: string | null }>, productUrl: string) {
      const byOrganization = new Map<string, typeof alerts>()
      for (const alert of alerts) {
        const group = byOrganization.get(alert.organizationId)
        if (group) group.push(alert)
        else byOrganization.set(alert.organizationId, [alert])
      }
      for (const [organizationId, ofOrganization] of byOrganization) {
        const alertIds = ofOrganization.map((alert) => alert.id).filter((id) => !remembered.has(`incident:${id}`))
        const names = [...new Set(ofOrganization.flatMap((alert) => (alert.service === null ? [] : [alert.service])))].filter(
          (name) => !remembered.has(`service:${organizationId}:${name}`),
        )
        const [incidents, entries] = await Promise.all([
          incidentsOfAlerts(db, organizationId, alertIds),
          catalogEntriesOf(db, organizationId, names),
        ])
        for (const id of alertIds)
          remembered.set(`incident:${id}`, Promise.resolve(pagedIncident(incidents.get(id), organizationId, productUrl)))
        for (const name of names) remembered.set(`service:${organizationId}:${name}`, Promise.resolve(entries.get(name.toLowerCase())))
      }
    },
    supportHours: (organizationId: string, service: string) =>
      once(`support-hours:${organizationId}:${service}`, () => supportHoursOf(db, organizationId, service)),
  }
}

export type PagingReads = ReturnType<typeof pagingReads>

/**
 * Pages the people a step's targets name now: users themselves, whoever is on call in a
 * schedule, a team's responders (and posts to its chat integrations); each person once per
 * step, through the channels their preferences give this priority. Every attempt is recorded,
 * the ones that cannot happen too (nobody on call, quiet hours, no provider), through `writes`
 * (written when the caller's transaction flushes them); `reads` are that transaction's.
 */
export async function pageStep(
  db: Executor,
  deps: PagingDeps,
  reads: PagingReads,
  writes: StepWrites,
  alert: AlertRow,
  organizationId: string,
  position: StepPosition,
  targets: Target[],
  now: Date,
): Promise<string[]> {
  const attempt = { organizationId, alertId: alert.id, round: position.round, step: position.step }
  const people = new Map<string, Target>()
  const reached = (userId: string, target: Target) => void (people.has(userId) || people.set(userId, target))
  const onCall = await reads.onCall(
    organizationId,
    targets.filter((t) => t.type === 'schedule').map((t) => t.id),
    now,
  )
  const responders = await reads.responders(
    organizationId,
    targets.filter((t) => t.type === 'team').map((t) => t.id),
  )
  for (const target of targets.filter((t) => t.type === 'chat')) {
    const attemptId = writes.attempt({
      ...attempt,
      userId: null,
      targetType: 'chat',
      targetId: target.id,
      channel: 'chat',
      recipient: null,
      status: 'queued',
      error: null,
    })
    writes.job({ name: CHAT_QUEUE, data: { attemptId }, singletonKey: attemptId })
  }
  // Written at once: the delivery row names its attempt.
  for (const target of targets.filter((t) => t.type === 'webhook')) {
    const attemptId = await insertAttempt(db, {
      ...attempt,
      userId: null,
      targetType: 'webhook',
      targetId: target.id,
      channel: 'webhook',
      recipient: null,
      status: 'queued',
      error: null,
    })
    if (attemptId) await deps.queueWebhook(db, { organizationId, webhookId: target.id, attemptId, alert, position })
  }
  for (const target of targets.filter((t) => t.type !== 'chat' && t.type !== 'webhook')) {
    const found =
      target.type === 'user'
        ? [target.id]
        : target.type === 'schedule'
          ? [onCall.get(target.id)].filter((userId): userId is string => userId !== undefined)
          : responders.filter((member) => member.teamId === target.id).map((member) => member.userId)
    if (found.length === 0) {
      const error = target.type === 'schedule' ? 'nobody is on call in this schedule now' : 'the team has no responders'
      writes.attempt({
        ...attempt,
        userId: null,
        targetType: target.type,
        targetId: target.id,
        channel: 'none',
        recipient: null,
        status: 'failed',
        error,
      })
    }
    for (const userId of found) reached(userId, target)
  }

  // A member suspended since the policy was written is not paged, and says so.
  const active = await reads.active(organizationId, [...people.keys()])
  const preferences = await reads.preferences([...active])
  // Urgency matters only to people with notification rules: the support hours are read for them alone.
  const urgency = async () =>
    urgencyOf(alert.priority, alert.service ? await reads.supportHours(organizationId, alert.service) : undefined, now)
  const paged: string[] = []
  const persons: Array<{ userId: string; target: Target; channels: PagingChannel[] }> = []
  for (const [userId, target] of people) {
    const via = { ...attempt, userId, targetType: target.type, targetId: target.id }
    const chosen = active.has(userId) ? preferences.get(userId) : undefined
    if (!chosen) {
      writes.attempt({
        ...via,
        channel: 'none',
        recipient: null,
        status: 'failed',
        error: 'not an active member of the organization',
      })
      continue
    }
    const plan = planFor(chosen, alert.priority, chosen.rules ? await urgency() : 'high', now)
    if (plan.now.length === 0 && plan.later.length === 0) {
      writes.attempt({ ...via, channel: 'none', recipient: null, status: 'failed', error: plan.reason ?? null })
      continue
    }
    paged.push(userId)
    if (plan.now.length > 0) persons.push({ userId, target, channels: plan.now })
    // A rule's later channels page only while the alert is unacknowledged (escalator.ts).
    for (const { channel, delayMinutes } of plan.later) {
      const job: NotificationRuleJob = {
        organizationId,
        alertId: alert.id,
        userId,
        target: { type: target.type, id: target.id },
        channel,
        position,
      }
      writes.job({
        name: NOTIFICATION_RULE_QUEUE,
        data: job,
        startAfter: new Date(now.getTime() + delayMinutes * 60_000),
        singletonKey: `${alert.id}:${position.round}:${position.step}:${userId}:${channel}`,
      })
    }
  }
  await pagePeople(deps, reads, writes, alert, organizationId, position, persons, now)
  return paged
}

/** A channel of a person's notification rule, due after its delay: `{ …, channel }` on NOTIFICATION_RULE_QUEUE. */
export const NOTIFICATION_RULE_QUEUE = 'alerting.notification-rule'

export interface NotificationRuleJob {
  organizationId: string
  alertId: string
  userId: string
  target: Target
  channel: PagingChannel
  position: StepPosition
}

/**
 * Sends each person a page on the given channels now: one acknowledgement link per person, one
 * outbox message per channel, each recorded as an attempt (the ones that cannot go, with why).
 */
export async function pagePeople(
  deps: PagingDeps,
  reads: PagingReads,
  writes: StepWrites,
  alert: AlertRow,
  organizationId: string,
  position: StepPosition,
  persons: Array<{ userId: string; target: Target; channels: PagingChannel[] }>,
  now: Date,
): Promise<void> {
  if (persons.length === 0) return
  const userIds = persons.map((person) => person.userId)
  const preferences = await reads.preferences(userIds)
  const emails = await reads.emails(userIds)
  const addresses = {
    email: await reads.addresses(userIds, 'email'),
    sms: await reads.addresses(userIds, 'sms'),
    voice: await reads.addresses(userIds, 'voice'),
  }
  const pushes = await reads.pushes(userIds)
  // The first step pages at once, before any investigation can be done; later pages carry its brief.
  const brief = position.step > 0 || position.round > 0 ? await reads.brief(organizationId, alert.id) : null
  const incident = await reads.incident(organizationId, alert.id, deps.productUrl)
  const service = await reads.service(organizationId, alert.service)
  const attempt = { organizationId, alertId: alert.id, round: position.round, step: position.step }
  for (const { userId, target, channels } of persons) {
    const via = { ...attempt, userId, targetType: target.type, targetId: target.id }
    const ack = newAckLink(writes, deps, alert, organizationId, userId, now)
    const links = { alert: `${deps.productUrl}/api/v1/organizations/${organizationId}/alerts/${alert.id}`, ack: ack.url }
    for (const channel of channels) {
      if (channel === 'push') {
        const subscriptions = pushes.get(userId) ?? []
        if (subscriptions.length === 0) {
          writes.attempt({ ...via, channel, recipient: null, status: 'failed', error: NO_SUBSCRIPTION })
          continue
        }
        const devices = subscriptions.map((subscription) => new URL(subscription.endpoint).host).join(', ')
        const queued = writes.message({
          organizationId,
          kind: 'alert.page',
          channel,
          to: pushRecipient(subscriptions),
          subject: `[${alert.priority}] ${alert.title}`,
          text: pagePush(alert, organizationId, position, links, brief, incident),
        })
        writes.attempt({ ...via, channel, recipient: devices, ...carried(queued) })
        continue
      }
      // A person's first verified number is paged (contact methods); an unverified one never is.
      const phone = channel === 'email' ? undefined : (addresses[channel].get(userId) ?? [])[0]
      if (channel !== 'email' && !phone) {
        writes.attempt({ ...via, channel, recipient: null, status: 'failed', error: noPhone(channel) })
        continue
      }
      // E-mail goes to the person's first verified e-mail contact method, else the address their
      // preferences name, else their account's.
      const to =
        phone ?? (addresses.email.get(userId) ?? [])[0] ?? preferences.get(userId)?.channels.email.address ?? emails.get(userId) ?? ''
      const message =
        channel === 'email'
          ? { ...pageEmail(alert, organizationId, position, links, brief, incident, service), channel, to }
          : { organizationId, kind: 'alert.page', channel, to, text: channel === 'sms' ? pageSms(alert, ack, incident) : pageVoice(alert) }
      writes.attempt({ ...via, channel, recipient: to, ...carried(writes.message(message)) })
    }
  }
}
