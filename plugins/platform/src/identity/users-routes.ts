import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
// `request.user` is the auth package's; named so a build of this package alone sees it.
import type {} from '@svc/auth'
import { UserSubscription, userSubscription } from '@svc/billing'

/** The user's subscription status (spec: "Platform API: users"); the profile routes are @svc/profile's. */
export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/users/me/subscription',
    {
      schema: {
        tags: ['users'],
        summary: "Subscription status: the caller's organizations' products, their own and any legacy subscription",
        response: { 200: UserSubscription },
      },
    },
    async (request) => userSubscription(app.database.db, request.user.userId),
  )
}
