import type Stripe from 'stripe'
import type { Executor } from '@svc/db'

/** Who pays: an organization, or a person for their own subscription. */
export type Payer = { organizationId: string; name: string } | { userId: string; email: string }

const ownerColumn = (payer: Payer) => ('organizationId' in payer ? ('organizationId' as const) : ('userId' as const))
const ownerId = (payer: Payer) => ('organizationId' in payer ? payer.organizationId : payer.userId)

async function knownCustomer(db: Executor, payer: Payer): Promise<string | undefined> {
  const row = await db
    .selectFrom('core.billingCustomers')
    .select('stripeCustomerId')
    .where(ownerColumn(payer), '=', ownerId(payer))
    .executeTakeFirst()
  return row?.stripeCustomerId
}

/**
 * The payer's Stripe customer, created on first use and reused after. Two first uses at once
 * make one customer: Stripe answers the second creation with the first (same idempotency key),
 * and the row is written once.
 */
export async function customerFor(db: Executor, stripe: Stripe, payer: Payer): Promise<string> {
  const known = await knownCustomer(db, payer)
  if (known) return known
  const metadata: Record<string, string> = { [ownerColumn(payer)]: ownerId(payer) }
  const customer = await stripe.customers.create(
    'organizationId' in payer ? { name: payer.name, metadata } : { email: payer.email, metadata },
    { idempotencyKey: `customer-${ownerColumn(payer)}-${ownerId(payer)}` },
  )
  await db
    .insertInto('core.billingCustomers')
    .values({ [ownerColumn(payer)]: ownerId(payer), stripeCustomerId: customer.id })
    .onConflict((conflict) => conflict.doNothing())
    .execute()
  return (await knownCustomer(db, payer)) ?? customer.id
}

/** Who a Stripe customer is ours for, if anyone. */
export async function payerOfCustomer(db: Executor, stripeCustomerId: string) {
  return db
    .selectFrom('core.billingCustomers')
    .select(['organizationId', 'userId'])
    .where('stripeCustomerId', '=', stripeCustomerId)
    .executeTakeFirst()
}
