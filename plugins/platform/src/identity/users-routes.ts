import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
// `request.user` is the auth package's; named so a build of this package alone sees it.
import type {} from '@svc/auth'
import { subscriptionsOfUser } from '../queries/users.js'
import { UserSubscription } from './schemas.js'

const ACTIVE_STATUSES = new Set(['active', 'trialing'])

/** The user's subscription status (spec: "Platform API: users"); the profile routes are @svc/profile's. */
export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
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
      const status =
        subscriptions.length === 0
          ? ('none' as const)
          : subscriptions.some((entry) => ACTIVE_STATUSES.has(entry.status))
            ? ('active' as const)
            : ('inactive' as const)
      return { status, subscriptions }
    },
  )
}
