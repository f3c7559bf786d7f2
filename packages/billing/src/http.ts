import { Type } from 'typebox'
import type { BillingConfig } from '@svc/config'
import { BadRequestError, BillingDisabledError, ConflictError, UpstreamError } from '@svc/http'
import type Stripe from 'stripe'
import { PRODUCT_KEYS } from './catalog.js'
import { stripeClient } from './client.js'
import { CatalogMissing } from './sessions.js'

// What both services' billing routes share: the checkout body, the refusals, and Stripe's errors
// as our own.

export const CheckoutBody = Type.Object(
  {
    product: Type.Enum(PRODUCT_KEYS, { description: '`bundle` or a single product: statuspages, alerting, synthetics' }),
    plan: Type.Enum(['team', 'business', 'enterprise'] as const, { description: 'enterprise is sold by our sales team, not by checkout' }),
  },
  { additionalProperties: false },
)
export const CheckoutUrl = Type.Object({ url: Type.String({ description: 'The Stripe page to send the browser to' }) })

/** What the billing routes need: the Stripe client of the configured account, and where checkout returns. */
export interface Billing {
  stripe: Stripe
  config: BillingConfig
}

export async function billingOf(config: BillingConfig | undefined): Promise<Billing | undefined> {
  return config ? { stripe: await stripeClient(config), config } : undefined
}

/** Stripe refused or could not be reached: a 502 saying so, never the SDK's error as a 500. */
export async function viaStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof CatalogMissing) throw new ConflictError(error.message)
    const stripeError = error as { type?: string; message?: string }
    if (typeof stripeError.type === 'string' && stripeError.type.startsWith('Stripe'))
      throw new UpstreamError(`Stripe: ${stripeError.message ?? stripeError.type}`)
    throw error
  }
}

/** Enterprise plans are priced by sales (spec, "Pricing model"). */
export function soldPlan(plan: 'team' | 'business' | 'enterprise'): 'team' | 'business' {
  if (plan === 'enterprise') throw new BadRequestError('plan: enterprise is not sold by checkout; contact sales for a quote')
  return plan
}

/** The billing of a request, or 503 BILLING_DISABLED when STRIPE_SECRET_KEY is not set. */
export function requireBilling(billing: Billing | undefined): Billing {
  if (!billing) throw new BillingDisabledError('billing is not enabled on this platform (STRIPE_SECRET_KEY is not set)')
  return billing
}
