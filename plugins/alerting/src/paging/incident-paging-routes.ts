import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ConflictError, ListResponse, Timestamp, invalidField } from '@svc/http'
import type { Escalator } from './escalator.js'
import {
  addTimeline,
  assignIncidentRole,
  editIncident,
  fullIncidentBody,
  Incident,
  incidentAuditOf,
  incidentOrNotFound,
  IncidentParams,
  snoozeIncident,
  SnoozeIncident,
  timelineEntry,
} from '../incidents/index.js'
import { REQUEST_TARGET_TYPES, requestResponders, responderRequests } from './responder-requests.js'

const tags = ['incidents']
const base = '/api/v1/organizations/:orgId/incidents'
const WEEK_MS = 7 * 24 * 60 * 60_000
const Uuid = Type.String({ format: 'uuid' })

const RequestTarget = Type.Object(
  {
    type: Type.Enum(REQUEST_TARGET_TYPES, {
      description: 'user: that person; team: its responders; schedule: whoever is on call in it; escalation_policy: its steps, in turn',
    }),
    id: Uuid,
  },
  { additionalProperties: false, title: 'ResponderRequestTarget' },
)
const RequestResponders = Type.Object(
  {
    targets: Type.Array(RequestTarget, { minItems: 1, maxItems: 10 }),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Shown in the page' })),
  },
  { additionalProperties: false },
)
const Reassign = Type.Object(
  {
    target: Type.Object(
      { type: Type.Union([Type.Literal('user'), Type.Literal('escalation_policy')]), id: Uuid },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
const Paged = Type.Object({ userId: Uuid, email: Type.String(), channel: Type.String(), status: Type.String(), at: Timestamp })
const ResponderRequest = Type.Object(
  {
    requestId: Type.String({ format: 'uuid', description: 'The request’s alert: its notifications and timeline are the alert’s' }),
    target: RequestTarget,
    requestedBy: Type.Union([Uuid, Type.Null()]),
    requestedAt: Timestamp,
    message: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved')], {
      description: 'open: nobody has answered; acknowledged: someone did (and is a responder); resolved: with the incident',
    }),
    paged: Type.Array(Paged, { description: 'Every page sent, per person and channel' }),
    acknowledgedBy: Type.Union([Type.Object({ userId: Uuid, email: Type.String() }), Type.Null()]),
    acknowledgedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'ResponderRequest' },
)

/**
 * Paging an incident's people again (decision 0019, "Paging again"): snoozing it. Working an
 * incident needs alerting responder; changes are audited and on its timeline.
 */
export const incidentPagingRoutes: FastifyPluginAsyncTypebox<{
  escalator: Pick<Escalator, 'escalateWith' | 'pageTargets' | 'afterCommit'>
}> = async (app, { escalator }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const responder = app.requireProductRole('alerting', 'responder')
  const actorOf = (request: FastifyRequest) => ({ userId: request.user.userId, audit: auditContextOf(request) })

  const requestsBody = async (organizationId: string, incidentId: string) =>
    (await responderRequests(db, organizationId, incidentId)).map((row) => {
      const matched = row.matched as { target: { type: (typeof REQUEST_TARGET_TYPES)[number]; id: string }; requestedBy?: string }
      return {
        requestId: row.alertId,
        target: matched.target,
        requestedBy: matched.requestedBy ?? null,
        requestedAt: row.linkedAt.toISOString(),
        message: row.description,
        status: row.status as 'open',
        paged: row.paged.map((attempt) => ({
          userId: attempt.userId!,
          email: attempt.email,
          channel: attempt.channel,
          status: attempt.status,
          at: attempt.createdAt.toISOString(),
        })),
        acknowledgedBy: row.acknowledgedBy && row.email ? { userId: row.acknowledgedBy, email: row.email } : null,
        acknowledgedAt: row.acknowledgedAt?.toISOString() ?? null,
      }
    })

  app.post(
    `${base}/:incidentId/responder-requests`,
    {
      schema: {
        tags,
        summary: 'Page people to help with the incident: persons, teams, schedules or escalation policies (alerting responder)',
        description:
          'Each target gets a request paged through its contact methods and notification preferences (a policy pages its steps in turn). Whoever acknowledges a request becomes a responder (`via: request`). 400 names a target that is not the organization’s; 409 when the incident is resolved.',
        params: IncidentParams,
        body: RequestResponders,
        response: { 201: ListResponse(ResponderRequest) },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      await db
        .transaction()
        .execute((trx) =>
          requestResponders(
            trx,
            escalator,
            actorOf(request),
            organizationId,
            incident.id,
            { targets: request.body.targets, message: request.body.message ?? null, reason: 'requested' },
            (index) => `targets/${index}/id`,
          ),
        )
      escalator.afterCommit()
      const data = await requestsBody(organizationId, incident.id)
      return reply.code(201).send({ data, meta: { page: 1, limit: 100, total: data.length } })
    },
  )

  app.get(
    `${base}/:incidentId/responder-requests`,
    {
      schema: {
        tags,
        summary: 'Who was asked to help, who was paged on which channel, and who acknowledged when (alerting viewer)',
        description: 'The first 100 requests, oldest first.',
        params: IncidentParams,
        response: { 200: ListResponse(ResponderRequest) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const data = await requestsBody(organizationId, incident.id)
      return { data, meta: { page: 1, limit: 100, total: data.length } }
    },
  )

  app.post(
    `${base}/:incidentId/reassign`,
    {
      schema: {
        tags,
        summary: 'Reassign the incident to a person or an escalation policy (alerting responder)',
        description:
          'As PagerDuty does: the incident goes back to triage and the new assignee is paged (a responder request). A person also becomes its commander. 409 when it is resolved.',
        params: IncidentParams,
        body: Reassign,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { target } = request.body
      const actor = actorOf(request)
      const body = await db.transaction().execute(async (trx) => {
        const incident = await incidentOrNotFound(trx, organizationId, request.params.incidentId, true)
        if (incident.status === 'resolved') throw new ConflictError(`INC-${incident.number} is resolved: reopen it before reassigning it`)
        await requestResponders(
          trx,
          escalator,
          actor,
          organizationId,
          incident.id,
          { targets: [target], message: null, reason: 'reassigned' },
          () => 'target/id',
        )
        if (target.type === 'user') await assignIncidentRole(trx, actor, organizationId, incident.id, 'commander', target.id)
        if (incident.status !== 'triage') await editIncident(trx, app.jobs, actor, organizationId, incident.id, { status: 'triage' })
        await addTimeline(trx, [timelineEntry(organizationId, incident.id, actor.userId, 'reassigned', { target })])
        const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
        await recordAudit(trx, context, { ...entry, action: 'incident.reassigned', after: { target } })
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, incident.id))
      })
      escalator.afterCommit()
      return body
    },
  )

  app.post(
    `${base}/:incidentId/snooze`,
    {
      schema: {
        tags,
        summary: 'Snooze an acknowledged incident: its alerts page again when the snooze ends (alerting responder)',
        description:
          'Give `minutes` from now or `until` (within a week). The acknowledged alerts of the incident whose policy pages are paged again then, from the first step, and the incident goes back to triage; resolving it first cancels that. 409 in triage, when resolved, or when none of its alerts would page anyone.',
        params: IncidentParams,
        body: SnoozeIncident,
        response: { 200: Incident },
      },
      onRequest: responder,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const now = Date.now()
      const until = request.body.until ? new Date(request.body.until) : new Date(now + (request.body.minutes ?? 0) * 60_000)
      if (until.getTime() <= now) throw invalidField('until', 'is not in the future')
      if (until.getTime() > now + WEEK_MS) throw invalidField('until', 'is more than a week away')
      return db.transaction().execute(async (trx) => {
        await snoozeIncident(trx, actorOf(request), organizationId, request.params.incidentId, until)
        return fullIncidentBody(trx, organizationId, await incidentOrNotFound(trx, organizationId, request.params.incidentId))
      })
    },
  )
}
