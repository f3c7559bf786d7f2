import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IANAZone } from 'luxon'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ListResponse, NotFoundError, Timestamp, invalidField } from '@svc/http'
import { deleteSupportHours, listSupportHours, putSupportHours, type SupportHoursRow } from './queries.js'

const tags = ['escalation']
const OrgParams = Type.Object({ orgId: Type.String() })
const ServiceParams = Type.Object({ orgId: Type.String(), service: Type.String({ minLength: 1, maxLength: 200 }) })
const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour, on the service’s clock' })
const Days = Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), {
  minItems: 1,
  maxItems: 7,
  uniqueItems: true,
  description: '1 (Monday) to 7 (Sunday)',
})

const PutSupportHours = Type.Object(
  {
    timeZone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
    days: Days,
    start: Clock,
    end: Type.Unsafe<string>({ ...Clock, description: 'Not after `start`: the window runs past midnight into the next day' }),
  },
  { additionalProperties: false },
)
const SupportHours = Type.Object(
  {
    service: Type.String(),
    timeZone: Type.String(),
    days: Days,
    start: Type.String(),
    end: Type.String(),
    updatedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    updatedAt: Timestamp,
  },
  { title: 'ServiceSupportHours' },
)

const body = (row: SupportHoursRow) => ({
  service: row.service,
  timeZone: row.timeZone,
  days: row.days,
  start: row.startTime,
  end: row.endTime,
  updatedBy: row.updatedBy,
  updatedAt: row.updatedAt.toISOString(),
})

/**
 * Services' support hours (decision 0014, "Urgency"): a service's P1 and P2 alerts are high
 * urgency within them and low outside, and people's notification rules differ by urgency.
 * Reading needs alerting viewer, changing alerting manager; changes are audited.
 */
export const supportHoursRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  // A service is a name on alerts, not a row: the entry names it in its values.
  const entry = (organizationId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'service_support_hours',
    entityId: null,
  })

  app.get(
    '/api/v1/organizations/:orgId/support-hours',
    {
      schema: {
        tags,
        summary: 'Services’ support hours, by service (alerting viewer)',
        params: OrgParams,
        response: { 200: ListResponse(SupportHours) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const rows = await listSupportHours(db, membershipOf(request).organizationId)
      return { data: rows.map(body), meta: { page: 1, limit: rows.length, total: rows.length } }
    },
  )

  app.put(
    '/api/v1/organizations/:orgId/support-hours/:service',
    {
      schema: {
        tags,
        summary: 'Set a service’s support hours (alerting manager)',
        description: 'Outside them, the service’s P1 and P2 alerts page people by their low-urgency notification rules.',
        params: ServiceParams,
        body: PutSupportHours,
        response: { 200: SupportHours },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { timeZone, days, start, end } = request.body
      if (!IANAZone.isValidZone(timeZone)) throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin')
      if (start === end) throw invalidField('end', 'must differ from start')
      const { service } = request.params
      return body(
        await db.transaction().execute(async (trx) => {
          const row = await putSupportHours(trx, {
            organizationId,
            service,
            timeZone,
            days: [...days].sort(),
            startTime: start,
            endTime: end,
            updatedBy: request.user.userId,
          })
          await recordAudit(trx, auditContextOf(request), {
            ...entry(organizationId),
            action: 'service_support_hours.set',
            after: { service, timeZone, days: row.days, start, end },
          })
          return row
        }),
      )
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/support-hours/:service',
    {
      schema: {
        tags,
        summary: 'Remove a service’s support hours: its P1 and P2 alerts are high urgency at all times (alerting manager)',
        params: ServiceParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { service } = request.params
      await db.transaction().execute(async (trx) => {
        const removed = await deleteSupportHours(trx, organizationId, service)
        if (!removed) throw new NotFoundError('support hours of the service')
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId),
          action: 'service_support_hours.deleted',
          before: body(removed),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
