import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, sendSerialized, serializedAnswer } from '@svc/http'
import { findAlert, listAlertEvents, listAlerts } from './queries.js'
import { type AckTimeout, moveAlertByPerson } from './lifecycle.js'
import { Alert, AlertEvent, AlertParams, AlertQuery, AlertWithIncident, OrgParams, alertBody, eventBody } from './schemas.js'
import { keptAnswers, pageOf, type Executor } from '@svc/db'

const tags = ['alerts']

/**
 * Pages of the alert list, serialized, kept until the database announces a change to the
 * organization's alerts (decision 0029): a dashboard polling a quiet organization reads no rows.
 * At most 2,000 pages and 32 MiB of them (a page of 100 alerts is about 50 KiB).
 */
const LIST_PAGES_KEPT = { max: 2_000, ttlMs: 60_000, maxSize: 32 * 1024 * 1024, sizeOf: (page: Buffer) => page.length }

/** Alerts (the alerting surface's core): reading needs the alerting role viewer, acting on them responder. */
/** The incident an alert is in, with why (the incidents module's read; alerts sit below it). */
export type IncidentOfAlert = (
  db: Executor,
  organizationId: string,
  alertId: string,
) => Promise<
  | {
      id: string
      number: number
      title: string
      status: string
      severity: string
      rule: string
      score: number
      matched: unknown
      linkedAt: Date
    }
  | undefined
>

export interface AlertRouteOptions {
  incidentOf: IncidentOfAlert
  /** When an acknowledged alert pages again: its policy's timeout (oncall's port). */
  ackTimeout: AckTimeout
}

export const alertRoutes: FastifyPluginAsyncTypebox<AlertRouteOptions> = async (app, { incidentOf, ackTimeout }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const responder = app.requireProductRole('alerting', 'responder')
  const listPages = keptAnswers<Buffer>(app.database.changes, 'alerts', LIST_PAGES_KEPT)
  const alertOf = async (organizationId: string, alertId: string) => {
    const row = isUuid(alertId) ? await findAlert(db, organizationId, alertId) : undefined
    if (!row) throw new NotFoundError('alert')
    return row
  }

  app.get(
    '/api/v1/organizations/:orgId/alerts',
    {
      schema: {
        tags,
        summary: 'List alerts, newest first (alerting viewer)',
        params: OrgParams,
        querystring: AlertQuery,
        response: { 200: ListResponse(Alert) },
      },
      onRequest: viewer,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { page, limit, ...filter } = request.query
      const body = await listPages.get(organizationId, JSON.stringify(request.query), async () => {
        const { rows, total } = await listAlerts(db, organizationId, filter, pageOf({ page, limit }))
        return serializedAnswer(reply, { data: rows.map(alertBody), meta: { page, limit, total } })
      })
      return sendSerialized(reply, body)
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/alerts/:alertId',
    {
      schema: {
        tags,
        summary: 'Get an alert, with the incident it is in (alerting viewer)',
        params: AlertParams,
        response: { 200: AlertWithIncident },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const alert = await alertOf(organizationId, request.params.alertId)
      const incident = await incidentOf(db, organizationId, alert.id)
      return {
        ...alertBody(alert),
        incident: incident
          ? {
              ...incident,
              reference: `INC-${incident.number}`,
              matched: incident.matched as Record<string, unknown>,
              linkedAt: incident.linkedAt.toISOString(),
            }
          : null,
      }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/alerts/:alertId/events',
    {
      schema: {
        tags,
        summary: 'The timeline of an alert, oldest first, paged (alerting viewer)',
        description: 'Repeated firings are one `occurred` entry with their count (`occurrences`) and the latest time.',
        params: AlertParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(AlertEvent) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit } = request.query
      const alert = await alertOf(organizationId, request.params.alertId)
      const { rows, total } = await listAlertEvents(db, organizationId, alert.id, pageOf({ page, limit }))
      return { data: rows.map(eventBody), meta: { page, limit, total } }
    },
  )

  for (const [action, to] of [
    ['acknowledge', 'acknowledged'],
    ['resolve', 'resolved'],
  ] as const) {
    app.post(
      `/api/v1/organizations/:orgId/alerts/:alertId/${action}`,
      {
        schema: {
          tags,
          summary: `${action === 'acknowledge' ? 'Acknowledge' : 'Resolve'} an alert (alerting responder); compare-and-set on its status`,
          description:
            action === 'acknowledge'
              ? 'An acknowledged alert answers as it is; a resolved one is a 409: a late acknowledgement never reopens it.'
              : 'A resolved alert answers as it is.',
          params: AlertParams,
          response: { 200: Alert },
        },
        onRequest: responder,
      },
      async (request) => {
        const { organizationId } = membershipOf(request)
        const current = await alertOf(organizationId, request.params.alertId)
        const row = await db.transaction().execute(async (trx) => {
          await moveAlertByPerson(trx, { organizationId, alertId: current.id }, { to, ackTimeout }, request.user.userId)
          return findAlert(trx, organizationId, current.id)
        })
        if (!row) throw new NotFoundError('alert')
        // Acknowledging an acknowledged alert, or resolving a resolved one, answers it as it is.
        if (row.status !== to) throw new ConflictError(`the alert is ${row.status}: it cannot be ${to}`)
        return alertBody(row)
      },
    )
  }
}
