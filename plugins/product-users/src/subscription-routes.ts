import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
// `request.user` is the auth package's; named so a build of this package alone sees it.
import type {} from '@svc/auth'
import {
  CheckoutBody,
  CheckoutUrl,
  UserSubscription,
  createCheckout,
  createPortal,
  requireBilling,
  soldPlan,
  userSubscription,
  viaStripe,
  type Billing,
} from '@svc/billing'

const tags = ['users']

/**
 * The product API's own subscription routes (spec, "Product API: users"): the same answers as
 * the platform's `GET /users/me/subscription`, `POST /billing/checkout` and `GET /billing/portal`,
 * from the same code and the same Stripe customer.
 */
export const subscriptionRoutes: FastifyPluginAsyncTypebox<{ billing?: Billing }> = async (app, { billing }) => {
  const db = app.database.db

  app.get(
    '/api/v1/users/me/subscription',
    {
      schema: {
        tags,
        summary: "Subscription status: the caller's organizations' products, their own and any legacy subscription",
        response: { 200: UserSubscription },
      },
    },
    async (request) => userSubscription(db, request.user.userId),
  )

  app.post(
    '/api/v1/users/me/subscription/checkout',
    {
      schema: { tags, summary: 'A checkout session for the caller’s own subscription', body: CheckoutBody, response: { 200: CheckoutUrl } },
    },
    async (request) => {
      const { stripe, config } = requireBilling(billing)
      const plan = soldPlan(request.body.plan)
      const payer = { userId: request.user.userId, email: request.user.email }
      return { url: await viaStripe(() => createCheckout(db, stripe, config, payer, { product: request.body.product, plan })) }
    },
  )

  app.post(
    '/api/v1/users/me/subscription/portal',
    { schema: { tags, summary: 'The Stripe billing portal for the caller’s own subscription', response: { 200: CheckoutUrl } } },
    async (request) => {
      const { stripe, config } = requireBilling(billing)
      const payer = { userId: request.user.userId, email: request.user.email }
      return { url: await viaStripe(() => createPortal(db, stripe, payer, config.successUrl)) }
    },
  )
}
