import { sql } from 'kysely'
import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { ConflictError, TooManyRequestsError, invalidField } from '@svc/http'
import type { Escalator } from './escalator.js'
import { findAlert } from '../alerts/index.js'
import { activeMembersAmong, policiesAmong, schedulesAmong, teamsAmong } from '../oncall/index.js'
import {
  type Actor,
  addTimeline,
  incidentAuditOf,
  incidentOrNotFound,
  linkAlerts,
  type Severity,
  timelineEntry,
} from '../incidents/index.js'

// A responder request is an alert of the incident (rule `responder_request`), so it pages through
// everything an alert pages through (contact methods, notification preferences, acknowledgement
// links, SMS and voice replies, Slack) and its notifications show who was paged and who
// acknowledged when (decision 0019, "Responders").

export const REQUEST_TARGET_TYPES = ['user', 'team', 'schedule', 'escalation_policy'] as const
export type RequestTarget = { type: (typeof REQUEST_TARGET_TYPES)[number]; id: string }

const PRIORITY_OF: Record<Severity, string> = { SEV1: 'P1', SEV2: 'P2', SEV3: 'P3', SEV4: 'P4' }

/**
 * How often one target may be asked for help in an organization, across its incidents: enough for
 * a bad night, too few to turn paging into a way of harassing someone.
 */
export const REQUESTS_PER_TARGET = { max: 6, windowMinutes: 60 }

const sameTarget = (a: RequestTarget, b: RequestTarget) => a.type === b.type && a.id === b.id

/** A target named twice in one request is a mistake, not two pages: 400 naming the second. */
function checkDistinct(targets: RequestTarget[], field: (index: number) => string) {
  targets.forEach((target, index) => {
    const first = targets.findIndex((other) => sameTarget(other, target))
    if (first < index) throw invalidField(field(index), `names the same ${target.type} as ${field(first)}`)
  })
}

/** The targets whose request on this incident is still open or acknowledged: asked already, not paged again. */
async function targetsAskedAlready(trx: Executor, organizationId: string, incidentId: string): Promise<RequestTarget[]> {
  const rows = await trx
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
    .select('l.matched')
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('l.rule', '=', 'responder_request')
    .where('a.status', '<>', 'resolved')
    .execute()
  return rows.map((row) => (row.matched as { target: RequestTarget }).target)
}

/** 429 when a target was asked for help too often lately in the organization, whatever the incident. */
async function checkRequestRate(trx: Executor, organizationId: string, targets: RequestTarget[]) {
  if (targets.length === 0) return
  const recent = await trx
    .selectFrom('divinux.incidentAlerts')
    .select((eb) => [
      sql<string>`matched -> 'target' ->> 'type'`.as('type'),
      sql<string>`matched -> 'target' ->> 'id'`.as('id'),
      eb.fn.countAll<number>().as('count'),
    ])
    .where('organizationId', '=', organizationId)
    .where('rule', '=', 'responder_request')
    .where('linkedAt', '>', sql<Date>`now() - make_interval(mins => ${REQUESTS_PER_TARGET.windowMinutes})`)
    .where(
      sql<string>`matched -> 'target' ->> 'id'`,
      'in',
      targets.map((target) => target.id),
    )
    .groupBy([sql`matched -> 'target' ->> 'type'`, sql`matched -> 'target' ->> 'id'`])
    .execute()
  for (const target of targets) {
    const count = Number(recent.find((row) => row.type === target.type && row.id === target.id)?.count ?? 0)
    if (count >= REQUESTS_PER_TARGET.max)
      throw new TooManyRequestsError(
        `this ${target.type} (${target.id}) was asked for help ${count} times in the last ${REQUESTS_PER_TARGET.windowMinutes} minutes: try again later`,
      )
  }
}

/** Each target must be the organization's: 400 naming it otherwise. */
async function checkRequestTargets(trx: Executor, organizationId: string, targets: RequestTarget[], field: (index: number) => string) {
  const ids = (type: RequestTarget['type']) => targets.filter((target) => target.type === type).map((target) => target.id)
  const known = {
    user: await activeMembersAmong(trx, organizationId, ids('user')),
    team: await teamsAmong(trx, organizationId, ids('team')),
    schedule: await schedulesAmong(trx, organizationId, ids('schedule')),
    escalation_policy: await policiesAmong(trx, organizationId, ids('escalation_policy')),
  }
  const what = {
    user: 'is not an active member of the organization',
    team: 'is not a team of the organization',
    schedule: 'is not a schedule of the organization',
    escalation_policy: 'is not an escalation policy of the organization',
  }
  targets.forEach((target, index) => {
    if (!known[target.type].has(target.id)) throw invalidField(field(index), what[target.type])
  })
}

/**
 * Pages each target about the incident, one request (alert) per target, in the caller's
 * transaction; the caller lets the pages go with `escalator.afterCommit()` once it commits.
 * A target whose request on the incident is still open or acknowledged is not paged again, and a
 * target asked too often lately in the organization is refused (429). Answers the new requests'
 * alert ids.
 */
export async function requestResponders(
  trx: Executor,
  escalator: Pick<Escalator, 'escalateWith' | 'pageTargets'>,
  actor: Actor,
  organizationId: string,
  incidentId: string,
  request: { targets: RequestTarget[]; message: string | null; reason: 'requested' | 'reassigned' },
  field: (index: number) => string,
): Promise<string[]> {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const reference = `INC-${incident.number}`
  if (incident.status === 'resolved') throw new ConflictError(`${reference} is resolved: nobody is paged about it`)
  checkDistinct(request.targets, field)
  await checkRequestTargets(trx, organizationId, request.targets, field)
  const asked = await targetsAskedAlready(trx, organizationId, incident.id)
  const targets = request.targets.filter((target) => !asked.some((other) => sameTarget(other, target)))
  await checkRequestRate(trx, organizationId, targets)
  const requestIds: string[] = []
  for (const target of targets) {
    const created = await sql<{ id: string }>`
      insert into divinux.alerts (organization_id, source, title, description, priority, fingerprint, labels)
      values (${organizationId}, 'incident', ${`Responder request for ${reference}: ${incident.title}`}, ${request.message},
        ${PRIORITY_OF[incident.severity as Severity]}, ${`responder-request:${crypto.randomUUID()}`},
        ${JSON.stringify({ incident: reference, request: request.reason })}::jsonb)
      returning id`.execute(trx)
    const alertId = created.rows[0]!.id
    // Dispatched at once: a request is no alert for outbound webhooks, workflows or correlation.
    await sql`
      insert into divinux.alert_events (organization_id, alert_id, type, data, actor_user_id, dispatched_at)
      values (${organizationId}, ${alertId}, 'created', ${JSON.stringify({ source: 'incident', incidentId: incident.id, target })}::jsonb,
        ${actor.userId}, now())`.execute(trx)
    await linkAlerts(trx, organizationId, incident.id, [
      { alertId, rule: 'responder_request', score: 1, matched: { target, requestedBy: actor.userId }, linkedBy: actor.userId },
    ])
    const alert = await findAlert(trx, organizationId, alertId)
    const row = { ...alert!, organizationId }
    if (target.type === 'escalation_policy') await escalator.escalateWith(trx, row, target.id)
    else await escalator.pageTargets(trx, row, [{ type: target.type, id: target.id }], `Responder request for ${reference}`)
    requestIds.push(alertId)
  }
  if (targets.length === 0) return requestIds
  await addTimeline(trx, [
    timelineEntry(organizationId, incident.id, actor.userId, 'responders_requested', {
      targets,
      requestIds,
      reason: request.reason,
    }),
  ])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.responders_requested',
    after: { targets, message: request.message, requestIds, reason: request.reason },
  })
  return requestIds
}

/** The incident's responder requests, oldest first, with who each paged and who acknowledged it. */
export async function responderRequests(db: Executor, organizationId: string, incidentId: string) {
  const requests = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
    .leftJoin('core.users as u', 'u.id', 'a.acknowledgedBy')
    .select(['l.alertId', 'l.matched', 'l.linkedAt', 'a.description', 'a.status', 'a.acknowledgedBy', 'u.email', 'a.acknowledgedAt'])
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('l.rule', '=', 'responder_request')
    .orderBy('l.linkedAt')
    .limit(100)
    .execute()
  const alertIds = requests.map((request) => request.alertId)
  const paged =
    alertIds.length === 0
      ? []
      : await db
          .selectFrom('divinux.notificationAttempts as n')
          .innerJoin('core.users as u', 'u.id', 'n.userId')
          .select(['n.alertId', 'n.userId', 'u.email', 'n.channel', 'n.status', 'n.createdAt'])
          .where('n.organizationId', '=', organizationId)
          .where('n.alertId', 'in', alertIds)
          .orderBy('n.createdAt')
          .orderBy('u.email')
          .execute()
  return requests.map((request) => ({ ...request, paged: paged.filter((attempt) => attempt.alertId === request.alertId) }))
}
