import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditProducts } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ListResponse, PaginationQuery, invalidField } from '@svc/http'
import { listAuditLogs } from '../queries/audit-logs.js'
import { OrgParams } from '../organizations/schemas.js'
import { pageOf } from '@svc/db'

const AuditLogEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organizationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('scim_token'), Type.Literal('api_token'), Type.Literal('system')]),
      userId: Type.Union([Type.String(), Type.Null()], { description: 'The user, or the person an API token acts for' }),
      originalUserId: Type.Union([Type.String(), Type.Null()], { description: 'The platform admin, when impersonating' }),
      tokenId: Type.Union([Type.String(), Type.Null()], { description: 'The SCIM or API token, when one acted' }),
    }),
    product: Type.String(),
    entityType: Type.String(),
    entityId: Type.Union([Type.String(), Type.Null()]),
    action: Type.String(),
    changes: Type.Object(
      {
        before: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        after: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      },
      { description: 'The changed fields before and after; secrets are never included' },
    ),
    requestId: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'AuditLogEntry' },
)

const AuditLogQuery = Type.Object({
  ...PaginationQuery.properties,
  product: Type.Optional(Type.Enum(auditProducts)),
  entityType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  actorId: Type.Optional(Type.String({ format: 'uuid', description: 'The acting user id' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' })),
})

/** The audit log is read-only over HTTP: there is no route that changes or deletes entries. */
export const auditLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/organizations/:orgId/audit-logs',
    {
      schema: {
        tags: ['audit'],
        summary: 'The organization’s audit log, newest first (member)',
        params: OrgParams,
        querystring: AuditLogQuery,
        response: { 200: ListResponse(AuditLogEntry) },
      },
    },
    async (request) => {
      const { page, limit, from, to, ...filters } = request.query
      const fromDate = from ? new Date(from) : undefined
      const toDate = to ? new Date(to) : undefined
      if (fromDate && toDate && fromDate > toDate) throw invalidField('from', 'must not be after `to`', 'querystring')
      const { rows, total } = await listAuditLogs(app.database.db, membershipOf(request).organizationId, {
        ...filters,
        from: fromDate,
        to: toDate,
        ...pageOf({ page, limit }),
      })
      return {
        data: rows.map((row) => ({
          id: row.id,
          organizationId: row.organizationId,
          actor: {
            type: row.actorType as 'user' | 'scim_token' | 'api_token' | 'system',
            userId: row.actorUserId,
            originalUserId: row.actorOriginalUserId,
            tokenId: row.actorTokenId,
          },
          product: row.product,
          entityType: row.entityType,
          entityId: row.entityId,
          action: row.action,
          changes: row.changes as { before?: Record<string, unknown>; after?: Record<string, unknown> },
          requestId: row.requestId,
          ip: row.ip,
          userAgent: row.userAgent,
          createdAt: row.createdAt.toISOString(),
        })),
        meta: { page, limit, total },
      }
    },
  )
}
