import type Stripe from 'stripe'
import type { BillingConfig } from '@svc/config'

/**
 * The Stripe SDK for the configured account. STRIPE_API_URL points its host, port and protocol at
 * a Stripe-compatible server (the tests' loopback one); the SDK itself is unchanged. It is imported
 * here, when billing is configured, not by every process that loads this package (a few hundred
 * modules).
 */
export async function stripeClient(config: Pick<BillingConfig, 'secretKey' | 'apiUrl'>): Promise<Stripe> {
  const target = config.apiUrl ? new URL(config.apiUrl) : undefined
  const { default: Stripe } = await import('stripe')
  return new Stripe(config.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'incident-platform' },
    ...(target
      ? {
          host: target.hostname,
          port: target.port || (target.protocol === 'https:' ? 443 : 80),
          protocol: target.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  })
}
