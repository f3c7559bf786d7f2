import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { accountOf, membershipOf } from '@svc/auth'
import { type Json, pageOf } from '@svc/db'
import { ListResponse, PaginationQuery, Timestamp, invalidField } from '@svc/http'
import { listMembers, productRolesOfMembers } from '@svc/members'
import { isTimeZone } from '@svc/profile'
import {
  NotificationPreferences,
  NotificationPreferencesPatch,
  applyPatch,
  brokenRule,
  defaultPreferences,
  storedPreferencesOf,
} from './preferences.js'
import { OrganizationUser, organizationUserBody } from './organization-user.js'
import { savePreferences, storedPreferences } from './queries.js'

const Preferences = Type.Object(
  {
    ...NotificationPreferences.properties,
    updatedAt: Type.Union([Timestamp, Type.Null()], { description: 'Null: the defaults, never changed' }),
  },
  { title: 'NotificationPreferencesAnswer' },
)

/**
 * The product API's users: notification preferences of the signed-in user (`/users/me/…`; the
 * profile itself is @svc/profile's), and the members of an organization with their product roles.
 */
export const productUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db

  // The defaults take the account's time zone, which the signed-in request already carries.
  const current = async (request: FastifyRequest) => {
    const stored = await storedPreferences(db, request.user.userId)
    if (stored) {
      const preferences = storedPreferencesOf(stored.preferences as NotificationPreferences)
      return { ...preferences, updatedAt: stored.updatedAt.toISOString() }
    }
    return { ...defaultPreferences(accountOf(request).timeZone), updatedAt: null }
  }

  app.get(
    '/api/v1/users/me/notifications',
    {
      schema: {
        tags: ['users'],
        summary: 'Notification preferences: channels, routing by priority, quiet hours, whether resolutions are told',
        response: { 200: Preferences },
      },
    },
    async (request) => current(request),
  )

  app.patch(
    '/api/v1/users/me/notifications',
    {
      schema: {
        tags: ['users'],
        summary: 'Change notification preferences (any part of any section; lists are replaced)',
        description:
          'SMS and voice need a phone number (E.164) while enabled; quiet hours need an IANA time zone and a start different from their end.',
        body: NotificationPreferencesPatch,
        response: { 200: Preferences },
      },
    },
    async (request) => {
      const { updatedAt: _updatedAt, ...preferences } = await current(request)
      const next = applyPatch(preferences, request.body)
      const broken = brokenRule(next, isTimeZone)
      if (broken) throw invalidField(broken[0], broken[1])
      const saved = await savePreferences(db, request.user.userId, next as unknown as Json)
      return { ...(saved.preferences as NotificationPreferences), updatedAt: saved.updatedAt.toISOString() }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/users',
    {
      schema: {
        tags: ['users'],
        summary: 'Members of the organization with their product roles (organization member)',
        params: Type.Object({ orgId: Type.String() }),
        querystring: PaginationQuery,
        response: { 200: ListResponse(OrganizationUser) },
      },
      onRequest: app.requireOrgMember,
    },
    async (request) => {
      const { page, limit } = request.query
      const { organizationId } = membershipOf(request)
      const { rows, total } = await listMembers(db, organizationId, pageOf({ page, limit }))
      const roles = await productRolesOfMembers(
        db,
        organizationId,
        rows.map((row) => row.id),
      )
      return {
        data: rows.map((row) => organizationUserBody(row, roles.get(row.id) ?? {})),
        meta: { page, limit, total },
      }
    },
  )
}
