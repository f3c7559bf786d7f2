import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import {
  CheckoutBody,
  CheckoutUrl,
  createCheckout,
  createPortal,
  ensureCatalog,
  listCatalog,
  requireBilling,
  soldPlan,
  viaStripe,
  type Billing,
  type Payer,
} from '@svc/billing'
import { findOrganization } from '../queries/organizations.js'
import { OrgParams } from '../organizations/schemas.js'

const tags = ['billing']

const Price = Type.Object({
  plan: Type.String(),
  lookupKey: Type.String(),
  stripePriceId: Type.String(),
  unitAmount: Type.Union([Type.Integer(), Type.Null()], { description: 'Cents' }),
  currency: Type.String(),
  interval: Type.Union([Type.String(), Type.Null()]),
})
const Product = Type.Object(
  { key: Type.String(), stripeProductId: Type.String(), name: Type.String(), prices: Type.Array(Price) },
  { title: 'BillingProduct' },
)

/**
 * Billing (issue 17, spec "Platform API: billing"). Without STRIPE_SECRET_KEY `status` answers
 * `{enabled: false}` and every other route 503 BILLING_DISABLED; the rest of the platform works.
 */
export const billingRoutes: FastifyPluginAsyncTypebox<{ billing?: Billing }> = async (app, { billing }) => {
  const db = app.database.db
  const enabled = () => requireBilling(billing)
  const personal = (request: FastifyRequest): Payer => ({ userId: request.user.userId, email: request.user.email })
  const organizational = async (request: FastifyRequest): Promise<Payer> => {
    const { organizationId } = membershipOf(request)
    const organization = await findOrganization(db, organizationId)
    return { organizationId, name: organization?.name ?? organizationId }
  }

  app.get(
    '/api/v1/billing/status',
    { schema: { tags, summary: 'Whether billing is enabled', response: { 200: Type.Object({ enabled: Type.Boolean() }) } } },
    async () => ({ enabled: billing !== undefined }),
  )

  app.post(
    '/api/v1/billing/setup',
    {
      schema: {
        tags,
        summary: 'Create the Stripe products and monthly prices that are missing (PlatformAdmins); running it again creates nothing',
        response: { 200: Type.Object({ createdPrices: Type.Integer(), products: Type.Array(Product) }) },
      },
      onRequest: app.requirePlatformAdmin,
    },
    async (request) => {
      const { stripe } = enabled()
      const { createdPrices } = await viaStripe(() => ensureCatalog(stripe))
      const products = await viaStripe(() => listCatalog(stripe))
      await recordAudit(db, auditContextOf(request), {
        organizationId: null,
        product: 'platform',
        entityType: 'billing_catalog',
        entityId: null,
        action: 'billing.setup',
        after: { createdPrices },
      })
      return { createdPrices, products }
    },
  )

  app.get(
    '/api/v1/billing/products',
    {
      schema: {
        tags,
        summary: 'The Stripe products with their prices (PlatformAdmins)',
        response: { 200: Type.Object({ data: Type.Array(Product) }) },
      },
      onRequest: app.requirePlatformAdmin,
    },
    async () => ({ data: await viaStripe(() => listCatalog(enabled().stripe)) }),
  )

  app.post(
    '/api/v1/billing/checkout',
    {
      schema: { tags, summary: 'A checkout session for the caller’s own subscription', body: CheckoutBody, response: { 200: CheckoutUrl } },
    },
    async (request) => {
      const { stripe, config } = enabled()
      const plan = soldPlan(request.body.plan)
      return { url: await viaStripe(() => createCheckout(db, stripe, config, personal(request), { product: request.body.product, plan })) }
    },
  )

  app.get(
    '/api/v1/billing/portal',
    { schema: { tags, summary: 'The Stripe billing portal for the caller’s own subscription', response: { 200: CheckoutUrl } } },
    async (request) => {
      const { stripe, config } = enabled()
      return { url: await viaStripe(() => createPortal(db, stripe, personal(request), config.successUrl)) }
    },
  )

  app.post(
    '/api/v1/billing/organizations/:orgId/billing/checkout',
    {
      schema: {
        tags,
        summary: 'A checkout session for the organization (owner); one Stripe customer per organization, reused',
        params: OrgParams,
        body: CheckoutBody,
        response: { 200: CheckoutUrl },
      },
      onRequest: app.requireOrgRole('owner'),
    },
    async (request) => {
      const { stripe, config } = enabled()
      const plan = soldPlan(request.body.plan)
      const payer = await organizational(request)
      const url = await viaStripe(() => createCheckout(db, stripe, config, payer, { product: request.body.product, plan }))
      await recordAudit(db, auditContextOf(request), {
        organizationId: membershipOf(request).organizationId,
        product: 'platform',
        entityType: 'billing',
        entityId: null,
        action: 'billing.checkout_started',
        after: { product: request.body.product, plan },
      })
      return { url }
    },
  )

  app.get(
    '/api/v1/billing/organizations/:orgId/billing/portal',
    {
      schema: {
        tags,
        summary: 'The Stripe billing portal for the organization (owner)',
        params: OrgParams,
        response: { 200: CheckoutUrl },
      },
      onRequest: app.requireOrgRole('owner'),
    },
    async (request) => {
      const { stripe, config } = enabled()
      return { url: await viaStripe(async () => createPortal(db, stripe, await organizational(request), config.successUrl)) }
    },
  )
}
