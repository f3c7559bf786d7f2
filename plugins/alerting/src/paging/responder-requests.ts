import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { ConflictError, TooManyRequestsError, invalidField } from '@svc/http'
import type { Escalator } from './escalator.js'
import { findAlert, raiseAlert } from '../alerts/index.js'
import { activeMembersAmong, policiesAmong, schedulesAmong, teamsAmong } from '../oncall/index.js'
import {
  type Actor,
  type SystemActor,
  addTimeline,
  alertsLinkedByRule,
  incidentAuditOf,
  incidentOrNotFound,
  linkAlerts,
  priorityOfIncidentSeverity,
  recentLinksPerTarget,
  timelineEntry,
} from '../incidents/index.js'

// A responder request is an alert of the incident (rule `responder_request`), so it pages through
// everything an alert pages through (contact methods, notification preferences, acknowledgement
// links, SMS and voice replies, Slack) and its notifications show who was paged and who
// acknowledged when (decision 0019, "Responders").

export const REQUEST_TARGET_TYPES = ['user', 'team', 'schedule', 'escalation_policy'] as const
export type RequestTarget = { type: (typeof REQUEST_TARGET_TYPES)[number]; id: string }

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
  const rows = await alertsLinkedByRule(trx, organizationId, incidentId, 'responder_request', { unresolvedOnly: true })
  return rows.map((row) => (row.matched as { target: RequestTarget }).target)
}

/** 429 when a target was asked for help too often lately in the organization, whatever the incident. */
async function checkRequestRate(trx: Executor, organizationId: string, targets: RequestTarget[]) {
  if (targets.length === 0) return
  const recent = await recentLinksPerTarget(
    trx,
    organizationId,
    'responder_request',
    REQUESTS_PER_TARGET.windowMinutes,
    targets.map((target) => target.id),
  )
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
  actor: Actor | SystemActor,
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
    const alertId = await raiseAlert(trx, {
      organizationId,
      title: `Responder request for ${reference}: ${incident.title}`,
      description: request.message,
      priority: await priorityOfIncidentSeverity(trx, organizationId, incident.severity),
      fingerprint: `responder-request:${crypto.randomUUID()}`,
      labels: { incident: reference, request: request.reason },
      raisedBy: actor.userId,
      about: { source: 'incident', incidentId: incident.id, target },
    })
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
  const requests = await alertsLinkedByRule(db, organizationId, incidentId, 'responder_request', { limit: 100 })
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
