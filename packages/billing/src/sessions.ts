import type Stripe from 'stripe'
import type { BillingConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import { lookupKey, type ProductKey, type SoldPlan } from './catalog.js'
import { customerFor, type Payer } from './customers.js'
import { priceFor } from './setup.js'

/** The catalog has no price for this yet: a platform admin has not run setup. */
export class CatalogMissing extends Error {}

/**
 * A Stripe Checkout session for a monthly subscription to `product` on `plan`, for the payer's
 * (reused) customer. The session and the subscription it creates carry who pays and what in
 * their metadata, which is what the webhook reads back.
 */
export async function createCheckout(
  db: Executor,
  stripe: Stripe,
  config: Pick<BillingConfig, 'successUrl' | 'cancelUrl'>,
  payer: Payer,
  choice: { product: ProductKey; plan: SoldPlan },
): Promise<string> {
  const price = await priceFor(stripe, lookupKey(choice.product, choice.plan))
  if (!price)
    throw new CatalogMissing(`${choice.product} on ${choice.plan} has no price yet: a platform admin runs POST /api/v1/billing/setup first`)
  const customer = await customerFor(db, stripe, payer)
  const metadata: Record<string, string> = {
    ...('organizationId' in payer ? { organizationId: payer.organizationId } : { userId: payer.userId }),
    product: choice.product,
    plan: choice.plan,
  }
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    customer,
    line_items: [{ price: price.id, quantity: 1 }],
    client_reference_id: 'organizationId' in payer ? payer.organizationId : payer.userId,
    success_url: config.successUrl,
    cancel_url: config.cancelUrl,
    metadata,
    subscription_data: { metadata },
  })
  if (!session.url) throw new Error('Stripe answered a checkout session without a URL')
  return session.url
}

/** A billing portal session for the payer's customer (created if it has none yet). */
export async function createPortal(db: Executor, stripe: Stripe, payer: Payer, returnUrl: string): Promise<string> {
  const customer = await customerFor(db, stripe, payer)
  const session = await stripe.billingPortal.sessions.create({ customer, return_url: returnUrl })
  return session.url
}
