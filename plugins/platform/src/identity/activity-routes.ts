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
  const list = async (userId: string, query: { page: number; limit: number }) => {
    const { rows, total } = await listUserActivities(db, userId, pageOf(query))
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
        summary: 'A member’s activity (admin, owner)',
        params: Type.Object({ orgId: Type.String(), memberId: Type.String({ format: 'uuid' }) }),
        querystring: PaginationQuery,
        response: { 200: ListResponse(UserActivity) },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const member = await findMember(db, membershipOf(request).organizationId, request.params.memberId)
      if (!member) throw new NotFoundError('member')
      return list(member.userId, request.query)
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
