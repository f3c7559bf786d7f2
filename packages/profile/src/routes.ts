import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Account, accountOf, type AuthenticatedUser } from '@svc/auth'
import { auditContextOf, recordAudit } from '@svc/audit'
import { invalidField } from '@svc/http'
import { profileFields, updateProfile } from './queries.js'
import { UserProfile, UserProfilePatch } from './schemas.js'
import { isTimeZone } from './time-zones.js'

function profileOf(
  user: AuthenticatedUser,
  account: Pick<Account, 'isEmployee' | 'displayName' | 'name' | 'givenName' | 'familyName' | 'timeZone' | 'platformRole'>,
) {
  return {
    userId: user.userId,
    email: user.email,
    groups: user.groups,
    isPlatformAdmin: user.isPlatformAdmin,
    originalUserId: user.originalUserId,
    originalEmail: user.originalEmail,
    isEmployee: account.isEmployee,
    displayName: account.displayName,
    name: account.name,
    givenName: account.givenName,
    familyName: account.familyName,
    timeZone: account.timeZone,
    platformRole: account.platformRole,
  }
}

/**
 * GET/PATCH /users/me: the same on both services (spec: "Platform API: users" and "Product API:
 * users"), since they share one identity and one users table.
 */
export const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/users/me',
    {
      schema: {
        tags: ['users'],
        summary: 'Current profile: the identity provider profile plus isEmployee from the database',
        response: { 200: UserProfile },
      },
    },
    async (request) => profileOf(request.user, accountOf(request)),
  )

  app.patch(
    '/api/v1/users/me',
    {
      schema: {
        tags: ['users'],
        summary: 'Update the editable fields of the own profile',
        body: UserProfilePatch,
        response: { 200: UserProfile },
      },
    },
    async (request) => {
      const { timeZone } = request.body
      if (typeof timeZone === 'string' && !isTimeZone(timeZone)) {
        throw invalidField('timeZone', 'must be an IANA time zone such as Europe/Berlin')
      }
      const updated = await app.database.db.transaction().execute(async (trx) => {
        const before = await profileFields(trx, request.user.userId)
        const after = await updateProfile(trx, request.user.userId, request.body)
        await recordAudit(trx, auditContextOf(request), {
          organizationId: null,
          product: 'platform',
          entityType: 'user',
          entityId: request.user.userId,
          action: 'user.updated',
          before,
          after: { displayName: after.displayName, timeZone: after.timeZone },
        })
        return after
      })
      app.sessions.forget(request.user.userId)
      return profileOf(
        request.user,
        updated as Pick<Account, 'isEmployee' | 'displayName' | 'name' | 'givenName' | 'familyName' | 'timeZone' | 'platformRole'>,
      )
    },
  )
}
