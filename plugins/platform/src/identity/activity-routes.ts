import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { listUserActivities, membershipOf } from '@svc/auth'
import { pageOf } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery } from '@svc/http'
import { findMember } from '@svc/members'

const UserActivity = Type.Object(
  {
    kind: Type.Union([Type.Literal('sign_in'), Type.Literal('session_refresh'), Type.Literal('impersonation'), Type.Literal('api_use')]),
    product: Type.Union([Type.Literal('platform'), Type.Literal('product')], { description: 'The API that saw it' }),
    day: Type.String({ format: 'date', description: 'UTC day' }),
    firstAt: Type.String({ format: 'date-time' }),
    lastAt: Type.String({ format: 'date-time', description: 'Equal to firstAt for a sign-in or refresh' }),
    requests: Type.Integer({ description: 'API use and impersonation: requests that day; otherwise 1' }),
    actedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'Impersonation: the platform admin who acted as this user',
    }),
    organizationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'API use and impersonation: the organization the requests were for (null: none, or recorded before 2026-12)',
    }),
    ip: Type.Union([Type.String(), Type.Null()], { description: 'The last address seen' }),
    userAgent: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'UserActivity' },
)

type ActivityRow = Awaited<ReturnType<typeof listUserActivities>>['rows'][number]

const body = (row: ActivityRow) => ({
  kind: row.kind as 'sign_in' | 'session_refresh' | 'impersonation' | 'api_use',
  product: row.product as 'platform' | 'product',
  day: row.day instanceof Date ? row.day.toISOString().slice(0, 10) : String(row.day),
  firstAt: row.firstAt.toISOString(),
  lastAt: row.lastAt.toISOString(),
  requests: row.requests,
  actedBy: row.actedBy,
  organizationId: row.organizationId,
  ip: row.ip,
  userAgent: row.userAgent,
})

const tags = ['users']

/**
 * User activity (decision 0022): a person reads their own; organization admins and owners read
 * their members'; platform admins anyone's. Newest first.
 */
export const activityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const list = async (userId: string, query: { page: number; limit: number }, organization?: { id: string; joinedAt: Date }) => {
    const { rows, total } = await listUserActivities(db, userId, pageOf(query), organization)
    return { data: rows.map(body), meta: { page: query.page, limit: query.limit, total } }
  }

  app.get(
    '/api/v1/users/me/activity',
    {
      schema: {
        tags,
        summary: 'Your sign-ins, session refreshes, API use (per product and day) and impersonation by platform admins',
        querystring: PaginationQuery,
        response: { 200: ListResponse(UserActivity) },
      },
    },
    async (request) => list(request.user.userId, request.query),
  )

  app.get(
    '/api/v1/organizations/:orgId/members/:memberId/activity',
    {
      schema: {
        tags: ['members'],
        summary: 'A member’s activity in this organization since joining (admin, owner)',
        description:
          'API use and impersonation in this organization only: sign-ins and use elsewhere are the person’s own. An invited member who has not accepted is not found (404).',
        params: Type.Object({ orgId: Type.String(), memberId: Type.String({ format: 'uuid' }) }),
        querystring: PaginationQuery,
        response: { 200: ListResponse(UserActivity) },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const member = await findMember(db, organizationId, request.params.memberId)
      // An invitation reveals nothing about the account behind the address (decision 0023).
      if (!member?.joinedAt) throw new NotFoundError('member')
      return list(member.userId, request.query, { id: organizationId, joinedAt: member.joinedAt })
    },
  )

  app.get(
    '/api/v1/admin/users/:userId/activity',
    {
      schema: {
        tags: ['admin'],
        summary: 'Any user’s activity (platform admin)',
        params: Type.Object({ userId: Type.String({ format: 'uuid' }) }),
        querystring: PaginationQuery,
        response: { 200: ListResponse(UserActivity) },
      },
      onRequest: app.requirePlatformAdmin,
    },
    async (request) => {
      const user = await db.selectFrom('core.users').select('id').where('id', '=', request.params.userId).executeTakeFirst()
      if (!user) throw new NotFoundError('user')
      return list(user.id, request.query)
    },
  )
}
