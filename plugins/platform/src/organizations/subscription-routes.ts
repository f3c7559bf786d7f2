import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { subscriptionsOfOrganization } from '../queries/subscriptions.js'
import { OrgParams } from './schemas.js'

/** The products sold separately; `bundle` covers all of them. */
const billedProducts = ['statuspages', 'alerting', 'synthetics'] as const

const ProductSubscription = Type.Object({
  product: Type.Enum(billedProducts),
  plan: Type.Union([Type.String(), Type.Null()], { description: 'team, business or enterprise; null when none' }),
  status: Type.String({ description: 'The payment provider status (active, trialing, past_due, canceled, ...) or none' }),
  source: Type.Union([Type.Literal('product'), Type.Literal('bundle'), Type.Literal('legacy'), Type.Null()], {
    description: 'Where the entitlement comes from: the product’s own subscription, the bundle, or a legacy subscription',
  }),
  currentPeriodEnd: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  cancelAtPeriodEnd: Type.Boolean(),
})

const OrganizationSubscription = Type.Object({ products: Type.Array(ProductSubscription) }, { title: 'OrganizationSubscription' })

export const subscriptionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/organizations/:orgId/subscription',
    {
      schema: {
        tags: ['organizations'],
        summary: 'The organization’s subscription, per product (member)',
        description:
          'A product’s own subscription wins over the bundle, the bundle over a legacy subscription; `none` when nothing applies.',
        params: OrgParams,
        response: { 200: OrganizationSubscription },
      },
    },
    async (request) => {
      const { perProduct, legacy } = await subscriptionsOfOrganization(app.database.db, membershipOf(request).organizationId)
      const bundle = perProduct.find((row) => row.product === 'bundle')
      return {
        products: billedProducts.map((product) => {
          const own = perProduct.find((row) => row.product === product)
          const chosen = own ?? bundle
          if (chosen) {
            return {
              product,
              plan: chosen.plan,
              status: chosen.status,
              source: own ? ('product' as const) : ('bundle' as const),
              currentPeriodEnd: chosen.currentPeriodEnd?.toISOString() ?? null,
              cancelAtPeriodEnd: chosen.cancelAtPeriodEnd,
            }
          }
          if (legacy) {
            return {
              product,
              plan: legacy.plan,
              status: legacy.status,
              source: 'legacy' as const,
              currentPeriodEnd: legacy.currentPeriodEnd?.toISOString() ?? null,
              cancelAtPeriodEnd: false,
            }
          }
          return { product, plan: null, status: 'none', source: null, currentPeriodEnd: null, cancelAtPeriodEnd: false }
        }),
      }
    },
  )
}
