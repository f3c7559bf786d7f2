import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, invalidField } from '@svc/http'
import { activeMembersAmong } from '../oncall/index.js'
import { fieldFilters, typeIdOf } from './shaping/filters.js'
import { requireSeverity } from './shaping/severities.js'
import { checkRoleOfIncident } from './checklists/of-type.js'
import { fullIncidentBody, incidentAudit, incidentOrNotFound, linkBody, summaryBody, timelineBody } from './common.js'
import { addTimelineText, assignIncidentRole, declareIncident, editIncident, joinIncident } from './operations.js'
import {
  addTimeline,
  alertsWithIncident,
  findIncidentAlert,
  linkAlerts,
  listIncidentAlerts,
  listIncidents,
  listTimeline,
  removeRole,
} from './queries.js'
import {
  DeclareIncident,
  Incident,
  IncidentAlert,
  IncidentParams,
  IncidentQuery,
  IncidentRoleParams,
  IncidentSummary,
  LinkAlert,
  NewTimelineEntry,
  PutRole,
  TimelineEntry,
  TimelineQuery,
  UpdateIncident,
} from './schemas.js'

const tags = ['incidents']
const actorOf = (request: FastifyRequest) => ({ userId: request.user.userId, audit: auditContextOf(request) })
const OrgParams = Type.Object({ orgId: Type.String() })
const base = '/api/v1/organizations/:orgId/incidents'

/**
 * Incidents (decision 0019): declared by a person or opened by a P1/P2 alert, worked through a
 * state machine, with roles, a human timeline beside the system's, and the alerts they group.
 * Reading needs alerting viewer, working one alerting responder; every change writes its audit
 * entry and its timeline entry in the same transaction.
 */
export const incidentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const responder = app.requireProductRole('alerting', 'responder')

  /** Active members of the organization only: 400 naming the field otherwise. */
  const checkMember = async (executor: Executor, organizationId: string, userId: string, field: string) => {
    if (!(await activeMembersAmong(executor, organizationId, [userId])).has(userId)) {
      throw invalidField(field, 'is not an active member of the organization')
    }
  }
  /** Alerts of the organization in no incident: 400 naming the entry (409 when it is in another incident). */
  const checkAlerts = async (executor: Executor, organizationId: string, alertIds: string[], field: (index: number) => string) => {
    const found = new Map((await alertsWithIncident(executor, organizationId, alertIds)).map((alert) => [alert.id, alert]))
    alertIds.forEach((alertId, index) => {
      const alert = found.get(alertId)
      if (!alert) throw invalidField(field(index), 'is not an alert of the organization')
      if (alert.incidentId) throw new ConflictError(`alert ${alertId} is in incident ${alert.incidentId}`)
    })
  }

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List incidents, newest first (alerting viewer)',
        params: OrgParams,
        querystring: IncidentQuery,
        response: { 200: ListResponse(IncidentSummary) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit, status, type, severity, field = [] } = request.query
      const typeId = type === undefined ? undefined : type === 'none' ? null : await typeIdOf(db, organizationId, type)
      const fields = await fieldFilters(db, organizationId, field)
      const severities =
        severity &&
        (await Promise.all(
          severity.map(async (key, index) => (await requireSeverity(db, organizationId, key, `severity/${index}`, 'querystring')).key),
        ))
      const { rows, total } = await listIncidents(db, organizationId, { status, typeId, severities, fields }, pageOf({ page, limit }))
      return { data: rows.map(summaryBody), meta: { page, limit, total } }
    },
  )

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Declare an incident (alerting responder)',
        description:
          'Starts in triage with the declarer (or `commanderId`) as commander. `alertIds` must be alerts of the organization in no other incident (409 when one is). `type` and `fields` shape it: a field its type (or the field itself) requires at declaration is a 400 naming it when absent.',
        params: OrgParams,
        body: DeclareIncident,
        response: { 201: Incident },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { title, summary = null, severity, alertIds = [], commanderId = request.user.userId, type, fields } = request.body
      const now = new Date()
      const startedAt = request.body.startedAt ? new Date(request.body.startedAt) : now
      if (startedAt > now) throw invalidField('startedAt', 'is in the future')
      const body = await db.transaction().execute(async (trx) => {
        await checkMember(trx, organizationId, commanderId, 'commanderId')
        await checkAlerts(trx, organizationId, alertIds, (index) => `alertIds/${index}`)
        const incidentId = await declareIncident(trx, actorOf(request), organizationId, {
          title,
          summary,
          severity,
          startedAt,
          detectedAt: now,
          commanderId,
          alertIds,
          type,
          fields,
        })
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, incidentId))
      })
      return reply.code(201).send(body)
    },
  )

  app.get(
    `${base}/:incidentId`,
    {
      schema: { tags, summary: 'An incident with its roles (alerting viewer)', params: IncidentParams, response: { 200: Incident } },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return fullIncidentBody(db, organizationId, await incidentOrNotFound(db, organizationId, request.params.incidentId))
    },
  )

  app.patch(
    `${base}/:incidentId`,
    {
      schema: {
        tags,
        summary: 'Change an incident’s title, summary, severity, status, type or custom fields (alerting responder)',
        description:
          'Resolving needs every field its type (or the field itself) requires at declaration or resolution: a 400 names those missing. `fields` sets the values given (null clears one) and keeps the others. Status moves: any open status (triage, investigating, identified, monitoring) to another or to resolved; resolved only back to investigating (409 otherwise). Leaving triage sets acknowledgedAt, reaching monitoring or resolved sets mitigatedAt, resolving sets resolvedAt and reopening clears it.',
        params: IncidentParams,
        body: UpdateIncident,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return db
        .transaction()
        .execute(async (trx) =>
          fullIncidentBody(
            trx,
            organizationId,
            await editIncident(trx, app.jobs, actorOf(request), organizationId, request.params.incidentId, request.body),
          ),
        )
    },
  )

  app.put(
    `${base}/:incidentId/roles/:role`,
    {
      schema: {
        tags,
        summary: 'Give a role of the incident to a person (alerting responder)',
        description:
          'commander, communications, scribe, or a role name of the organization’s own; replaces whoever held it. An incident of a type that lists roles takes only those and commander (400 naming them).',
        params: IncidentRoleParams,
        body: PutRole,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { role } = request.params
      const { userId } = request.body
      return db.transaction().execute(async (trx) => {
        const incident = await incidentOrNotFound(trx, organizationId, request.params.incidentId, true)
        await checkRoleOfIncident(trx, organizationId, incident, role, 'role')
        await checkMember(trx, organizationId, userId, 'userId')
        await assignIncidentRole(trx, actorOf(request), organizationId, incident.id, role, userId)
        return fullIncidentBody(trx, organizationId, incident)
      })
    },
  )

  app.delete(
    `${base}/:incidentId/roles/:role`,
    {
      schema: {
        tags,
        summary: 'Leave a role of the incident unheld (alerting responder)',
        params: IncidentRoleParams,
        response: { 204: Type.Null() },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { role } = request.params
      await db.transaction().execute(async (trx) => {
        const incident = await incidentOrNotFound(trx, organizationId, request.params.incidentId, true)
        const previous = await removeRole(trx, organizationId, incident.id, role)
        if (!previous) throw new NotFoundError(`role ${role} of the incident`)
        await addTimeline(trx, [
          {
            organizationId,
            incidentId: incident.id,
            kind: 'role_removed',
            body: null,
            data: { role, userId: previous },
            authorId: request.user.userId,
          },
        ])
        const { context, entry } = incidentAudit(request, organizationId, incident.id)
        await recordAudit(trx, context, { ...entry, action: 'incident.role_removed', before: { role, userId: previous } })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    `${base}/:incidentId/timeline`,
    {
      schema: {
        tags,
        summary: 'The incident’s timeline, newest first: people’s notes and status updates beside the changes (alerting viewer)',
        params: IncidentParams,
        querystring: TimelineQuery,
        response: { 200: ListResponse(TimelineEntry) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit } = request.query
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const { rows, total } = await listTimeline(db, organizationId, incident.id, pageOf({ page, limit }))
      return { data: rows.map(timelineBody), meta: { page, limit, total } }
    },
  )

  app.post(
    `${base}/:incidentId/timeline`,
    {
      schema: {
        tags,
        summary: 'Add a note or a status update to the incident’s timeline (alerting responder)',
        params: IncidentParams,
        body: NewTimelineEntry,
        response: { 201: TimelineEntry },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { kind, body } = request.body
      const written = await db
        .transaction()
        .execute((trx) => addTimelineText(trx, actorOf(request), organizationId, request.params.incidentId, kind, body))
      return reply.code(201).send(timelineBody(written))
    },
  )

  app.post(
    `${base}/:incidentId/join`,
    {
      schema: {
        tags,
        summary: 'Join the incident as a responder (alerting responder)',
        description: 'Joining twice changes nothing. Slack’s “Join as responder” button does the same (via `chat`).',
        params: IncidentParams,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      return db.transaction().execute(async (trx) => {
        await joinIncident(trx, actorOf(request), organizationId, request.params.incidentId, 'api')
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, request.params.incidentId))
      })
    },
  )

  app.get(
    `${base}/:incidentId/alerts`,
    {
      schema: {
        tags,
        summary: 'The alerts in the incident, each with the rule, score and values that put it there (alerting viewer)',
        params: IncidentParams,
        querystring: TimelineQuery,
        response: { 200: ListResponse(IncidentAlert) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit } = request.query
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const { rows, total } = await listIncidentAlerts(db, organizationId, incident.id, pageOf({ page, limit }))
      return { data: rows.map(linkBody), meta: { page, limit, total } }
    },
  )

  app.post(
    `${base}/:incidentId/alerts`,
    {
      schema: {
        tags,
        summary: 'Put an alert in the incident by hand (alerting responder)',
        description: 'The alert must be of the organization (400) and in no other incident (409).',
        params: IncidentParams,
        body: LinkAlert,
        response: { 201: IncidentAlert },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { alertId } = request.body
      const author = request.user.userId
      await db.transaction().execute(async (trx) => {
        const incident = await incidentOrNotFound(trx, organizationId, request.params.incidentId, true)
        await checkAlerts(trx, organizationId, [alertId], () => 'alertId')
        const linked = await linkAlerts(trx, organizationId, incident.id, [
          { alertId, rule: 'manual', score: 1, matched: {}, linkedBy: author },
        ])
        if (linked.length === 0) throw new ConflictError(`alert ${alertId} is in another incident`)
        await addTimeline(trx, [
          {
            organizationId,
            incidentId: incident.id,
            kind: 'alert_linked',
            body: null,
            data: { alertId, rule: 'manual' },
            authorId: author,
          },
        ])
        const { context, entry } = incidentAudit(request, organizationId, incident.id)
        await recordAudit(trx, context, { ...entry, action: 'incident.alert_linked', after: { alertId, rule: 'manual' } })
      })
      const link = await findIncidentAlert(db, organizationId, request.params.incidentId, alertId)
      if (!link) throw new NotFoundError('incident')
      return reply.code(201).send(linkBody(link))
    },
  )
}
