import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Account, accountOf, type AuthenticatedUser } from '@svc/auth'
import { invalidField } from '@svc/http'
import { auditContextOf, recordAudit } from '@svc/audit'
import { profileFields, subscriptionsOfUser, updateProfile } from '../queries/users.js'
import { UserProfile, UserProfilePatch, UserSubscription } from './schemas.js'
import { isTimeZone } from './time-zones.js'

const ACTIVE_STATUSES = new Set(['active', 'trialing'])

function profileOf(user: AuthenticatedUser, account: Pick<Account, 'isEmployee' | 'displayName' | 'timeZone' | 'platformRole'>) {
  return {
    userId: user.userId,
    email: user.email,
    groups: user.groups,
    isPlatformAdmin: user.isPlatformAdmin,
    originalUserId: user.originalUserId,
    originalEmail: user.originalEmail,
    isEmployee: account.isEmployee,
    displayName: account.displayName,
    timeZone: account.timeZone,
    platformRole: account.platformRole,
  }
}

/** GET/PATCH /users/me and the user's subscription status (spec: "Platform API: users"). */
export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
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
          organizationId: null, product: 'platform', entityType: 'user', entityId: request.user.userId,
          action: 'user.updated', before, after: { displayName: after.displayName, timeZone: after.timeZone },
        })
        return after
      })
      app.sessions.forget(request.user.userId)
      return profileOf(request.user, updated as Pick<Account, 'isEmployee' | 'displayName' | 'timeZone' | 'platformRole'>)
    },
  )

  app.get(
    '/api/v1/users/me/subscription',
    {
      schema: {
        tags: ['users'],
        summary: "Subscription status: the caller's organizations' products and any legacy subscription",
        response: { 200: UserSubscription },
      },
    },
    async (request) => {
      const { organizational, legacy } = await subscriptionsOfUser(app.database.db, request.user.userId)
      const subscriptions = [
        ...organizational.map((row) => ({ source: 'organization' as const, ...row })),
        ...legacy.map((row) => ({ source: 'legacy' as const, product: 'bundle', ...row })),
      ].map((entry) => ({ ...entry, currentPeriodEnd: entry.currentPeriodEnd?.toISOString() ?? null }))
      const status = subscriptions.length === 0
        ? ('none' as const)
        : subscriptions.some((entry) => ACTIVE_STATUSES.has(entry.status)) ? ('active' as const) : ('inactive' as const)
      return { status, subscriptions }
    },
  )
}
