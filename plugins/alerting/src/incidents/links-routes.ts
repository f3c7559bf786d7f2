import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { Timestamp, invalidField } from '@svc/http'
import { deployBody, DeployEvent } from '../intake/index.js'
import { deploysBeforeIncident, incidentOrNotFound, timelineBody } from './common.js'
import { postStatusUpdate } from './status-pages.js'
import { alertIdsOf, checkAlertsOf, statusLinksOf } from './queries.js'
import { IncidentParams, TimelineEntry } from './schemas.js'

const tags = ['incidents']
const base = '/api/v1/organizations/:orgId/incidents'
const DEPLOY_WINDOW_MINUTES = 120
const Uuid = Type.String({ format: 'uuid' })

/** The status pages surface's read of the status page incidents about an incident (wired in by the service). */
export type StatusIncidentsReader = (
  db: Executor,
  organizationId: string,
  about: { incidentId: string; alertIds: string[]; statusIncidentIds: string[] },
) => Promise<
  Array<{
    id: string
    pageId: string
    pageName: string
    name: string
    status: string
    impact: string
    published: boolean
    startedAt: Date
    resolvedAt: Date | null
    via: 'incident' | 'alert' | 'correlation'
  }>
>

/** The insights surface's read of the RCA documents linked to alerting incidents or alerts (wired in by the service). */
export type RcaReader = (
  db: Executor,
  organizationId: string,
  alertingIds: string[],
) => Promise<Array<{ id: string; title: string; status: string; rootCause: string | null; publishedAt: Date | null; createdAt: Date }>>

const iso = (date: Date | null) => date?.toISOString() ?? null

const IncidentLinks = Type.Object(
  {
    checks: Type.Array(
      Type.Object({
        checkId: Type.String(),
        name: Type.Union([Type.String(), Type.Null()]),
        kind: Type.Union([Type.String(), Type.Null()]),
        target: Type.Union([Type.String(), Type.Null()]),
        alertId: Uuid,
        alertStatus: Type.String(),
        failingSince: Timestamp,
      }),
      { description: 'Synthetic checks whose failing alerts are in the incident' },
    ),
    statusPageIncidents: Type.Array(
      Type.Object({
        id: Uuid,
        pageId: Uuid,
        pageName: Type.String(),
        name: Type.String(),
        status: Type.String(),
        impact: Type.String(),
        published: Type.Boolean(),
        startedAt: Timestamp,
        resolvedAt: Type.Union([Timestamp, Type.Null()]),
        via: Type.Union([Type.Literal('incident'), Type.Literal('alert'), Type.Literal('correlation')], {
          description:
            'incident: opened by its published status updates; alert: following one of its alerts; correlation: opened by a person, put in it by a rule',
        }),
        link: Type.Union([
          Type.Object({ rule: Type.String(), score: Type.Number(), matched: Type.Record(Type.String(), Type.Unknown()) }),
          Type.Null(),
        ]),
      }),
    ),
    deploys: Type.Array(DeployEvent, {
      description: `Deploys of its services and the services they depend on in the ${DEPLOY_WINDOW_MINUTES} minutes before it started`,
    }),
    rcaDocuments: Type.Array(
      Type.Object({
        id: Uuid,
        title: Type.String(),
        status: Type.String(),
        rootCause: Type.Union([Type.String(), Type.Null()]),
        publishedAt: Type.Union([Timestamp, Type.Null()]),
      }),
      { description: 'Post-mortems linked to the incident or to one of its alerts' },
    ),
  },
  { title: 'IncidentLinks' },
)

const PublishStatusUpdate = Type.Object(
  {
    status: Type.Union([Type.Literal('investigating'), Type.Literal('identified'), Type.Literal('monitoring'), Type.Literal('resolved')], {
      description: 'The status page incident’s status after it',
    }),
    body: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 5000,
        pattern: '\\S',
        description: 'What the public reads; required unless `template` names one (then it wins over the template’s)',
      }),
    ),
    template: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
        description:
          'The key of a status page incident template: each page with one by that key takes its title, body and component statuses; other pages take `body`, or the status’s default words',
      }),
    ),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '\\S',
        description:
          'The public name of a status page incident this update opens (the comms agent drafts one). Without it the page names it after its affected components, for example "Partial outage affecting Checkout": never the internal incident title',
      }),
    ),
    publish: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'A status page incident opened for it is published at once; false: a draft a person publishes',
      }),
    ),
    draftOf: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'The investigation whose comms agent drafted this text (`…/insights/:id/agents`), kept on the timeline entry and in the audit log',
      }),
    ),
  },
  { additionalProperties: false },
)

/** The insights surface's answer to whether an analysis is the organization's (wired in by the service). */
export type AnalysisCheck = (db: Executor, organizationId: string, analysisId: string) => Promise<boolean>

export interface LinkRouteOptions {
  statusIncidents: StatusIncidentsReader
  rcas: RcaReader
  hasAnalysis: AnalysisCheck
}

/**
 * What an incident links to (decision 0019, "Links"), read from the surfaces that own it, and
 * its status updates published to status pages through the status pages surface's own event
 * (`statuspage.incident_update_requested`): alerting never writes their tables.
 */
export const incidentLinkRoutes: FastifyPluginAsyncTypebox<LinkRouteOptions> = async (app, { statusIncidents, rcas, hasAnalysis }) => {
  const db = app.database.db

  app.get(
    `${base}/:incidentId/links`,
    {
      schema: {
        tags,
        summary: 'What the incident links to: failing checks, status page incidents, deploys before it, RCA documents (alerting viewer)',
        description: 'Its alerts are `…/alerts`, its people `…/responder-requests` and `responders`.',
        params: IncidentParams,
        response: { 200: IncidentLinks },
      },
      onRequest: app.requireProductRole('alerting', 'viewer'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const incident = await incidentOrNotFound(db, organizationId, request.params.incidentId)
      const alertIds = await alertIdsOf(db, organizationId, incident.id)
      const links = await statusLinksOf(db, organizationId, incident.id)
      const deploys = await deploysBeforeIncident(db, organizationId, incident, DEPLOY_WINDOW_MINUTES, 20)
      const checks = await checkAlertsOf(db, organizationId, incident.id)
      const onPages = await statusIncidents(db, organizationId, {
        incidentId: incident.id,
        alertIds,
        statusIncidentIds: links.map((link) => link.statusIncidentId),
      })
      const documents = await rcas(db, organizationId, [incident.id, ...alertIds])
      return {
        checks: checks.map((check) => {
          const labels = check.labels as Record<string, string | undefined>
          return {
            checkId: labels.checkId ?? '',
            name: check.service,
            kind: labels.kind ?? null,
            target: labels.target ?? null,
            alertId: check.alertId,
            alertStatus: check.status,
            failingSince: check.firstSeenAt.toISOString(),
          }
        }),
        statusPageIncidents: onPages.map((row) => {
          const link = links.find((candidate) => candidate.statusIncidentId === row.id)
          return {
            ...row,
            startedAt: row.startedAt.toISOString(),
            resolvedAt: iso(row.resolvedAt),
            link: link ? { rule: link.rule, score: link.score, matched: link.matched as Record<string, unknown> } : null,
          }
        }),
        deploys: deploys.map(deployBody),
        rcaDocuments: documents.map((document) => ({
          id: document.id,
          title: document.title,
          status: document.status,
          rootCause: document.rootCause,
          publishedAt: iso(document.publishedAt),
        })),
      }
    },
  )

  app.post(
    `${base}/:incidentId/status-updates`,
    {
      schema: {
        tags,
        summary:
          'Post a status update to the incident’s timeline and publish it on status pages (alerting responder and statuspages manager)',
        description:
          'The status pages surface updates each open status page incident about the incident (opened for it, or linked to it by correlation) and opens one, a draft unless `publish`, on each page with components following its services, in the name of the caller. Opening status page incidents is what the status pages API asks a statuspages manager for, so this asks the same. The timeline entry is answered at once; the status pages follow within seconds (`…/links` shows them).',
        params: IncidentParams,
        body: PublishStatusUpdate,
        response: { 201: TimelineEntry },
      },
      // What reaches a status page needs the status pages role that API asks for the same change.
      onRequest: [app.requireProductRole('alerting', 'responder'), app.requireProductRole('statuspages', 'manager')],
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { status, body = '', template, name = null, publish: publishNow = false, draftOf } = request.body
      if (!body && !template) throw invalidField('body', 'is required unless a template is named')
      const authorId = request.user.userId
      // Cited on the timeline and in the audit log: only an analysis of this organization.
      if (draftOf && !(await hasAnalysis(db, organizationId, draftOf)))
        throw invalidField('draftOf', 'is not an analysis of the organization')
      const actor = { userId: authorId, audit: auditContextOf(request) }
      const entry = await db.transaction().execute((trx) =>
        postStatusUpdate(trx, app.jobs, actor, organizationId, request.params.incidentId, {
          status,
          body,
          name,
          publish: publishNow,
          ...(template ? { template } : {}),
          ...(draftOf ? { draftOf } : {}),
        }),
      )
      return reply.code(201).send(timelineBody(entry))
    },
  )
}
