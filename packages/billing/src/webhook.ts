import type Stripe from 'stripe'
import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { priceOf, PRODUCT_KEYS, type ProductKey, type Plan } from './catalog.js'
import { payerOfCustomer } from './customers.js'

// Stripe's events as changes to our subscriptions (spec, "Inbound payment provider events").
// Each event id is applied once, in the transaction of its effect (core.billing_events). Every
// subscription row remembers the time of the Stripe event that last wrote it: an event older
// than that (Stripe does not promise order) changes nothing, so a subscription never moves back.

export const HANDLED_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const

/** What a subscription is, as we keep it. */
export interface SubscriptionState {
  stripeSubscriptionId: string
  stripeCustomerId: string
  product: ProductKey
  plan: Plan
  status: string
  currentPeriodEnd: Date | null
  cancelAtPeriodEnd: boolean
}

export interface Applied {
  /** false: the event id was seen before; nothing changed. */
  applied: boolean
  /** Organizations whose payment failed with this event: their owners are told. */
  paymentFailed?: { organizationId: string }
}

const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : (value?.id ?? null))

const PLANS = ['team', 'business', 'enterprise'] as const

/** A product and plan named by a metadata object (ours, on a price or a subscription). */
function choiceIn(metadata: Stripe.Metadata | null | undefined): { product: ProductKey; plan: Plan } | undefined {
  const product = PRODUCT_KEYS.find((key) => key === metadata?.product)
  const plan = PLANS.find((name) => name === metadata?.plan)
  return product && plan ? { product, plan } : undefined
}

/**
 * The product and plan of a subscription: what its current price is (its lookup key, else the
 * price's metadata), and only for a price of neither (an enterprise deal's custom price) the
 * subscription's metadata. The metadata is written at checkout and Stripe leaves it as it was
 * when the customer changes plan in the billing portal; the price is what they now pay for.
 */
function choiceOf(subscription: Stripe.Subscription): { product: ProductKey; plan: Plan } | undefined {
  const price = subscription.items?.data?.[0]?.price
  return priceOf(price?.lookup_key) ?? choiceIn(price?.metadata) ?? choiceIn(subscription.metadata)
}

/** The subscription as we keep it, or undefined when it is not one of our products. */
export function stateOf(subscription: Stripe.Subscription, status = subscription.status): SubscriptionState | undefined {
  const choice = choiceOf(subscription)
  const customer = idOf(subscription.customer)
  if (!choice || !customer) return undefined
  // Newer API versions keep the period on the item; older ones on the subscription.
  const periodEnd =
    subscription.items?.data?.[0]?.current_period_end ??
    (subscription as unknown as { current_period_end?: number }).current_period_end ??
    null
  return {
    stripeSubscriptionId: subscription.id,
    stripeCustomerId: customer,
    ...choice,
    status,
    currentPeriodEnd: periodEnd ? new Date(periodEnd * 1000) : null,
    cancelAtPeriodEnd: subscription.cancel_at_period_end ?? false,
  }
}

/** Who pays for a subscription: its metadata, else the customer we created for them. */
async function payerOf(db: Executor, subscription: Stripe.Subscription, state: SubscriptionState) {
  const metadata = subscription.metadata ?? {}
  if (metadata.organizationId) return { organizationId: metadata.organizationId, userId: null }
  if (metadata.userId) return { organizationId: null, userId: metadata.userId }
  return payerOfCustomer(db, state.stripeCustomerId)
}

/** Writes the subscription unless what we hold was written by a newer event. */
export async function saveSubscription(db: Executor, subscription: Stripe.Subscription, state: SubscriptionState, at: Date): Promise<void> {
  const payer = await payerOf(db, subscription, state)
  if (!payer) return
  const fields = {
    plan: state.plan,
    status: state.status,
    stripeCustomerId: state.stripeCustomerId,
    stripeSubscriptionId: state.stripeSubscriptionId,
    currentPeriodEnd: state.currentPeriodEnd,
    providerUpdatedAt: at,
  }
  if (payer.organizationId) {
    await db
      .insertInto('core.orgProductSubscriptions')
      .values({ organizationId: payer.organizationId, product: state.product, cancelAtPeriodEnd: state.cancelAtPeriodEnd, ...fields })
      .onConflict((conflict) =>
        conflict
          .columns(['organizationId', 'product'])
          .doUpdateSet({ ...fields, cancelAtPeriodEnd: state.cancelAtPeriodEnd, updatedAt: sql<Date>`now()` })
          .where(
            sql<boolean>`core.org_product_subscriptions.provider_updated_at is null or core.org_product_subscriptions.provider_updated_at <= ${at}`,
          ),
      )
      .execute()
    return
  }
  if (!payer.userId) return
  await db
    .insertInto('core.subscriptions')
    .values({ userId: payer.userId, product: state.product, ...fields })
    .onConflict((conflict) =>
      conflict
        .column('stripeSubscriptionId')
        .doUpdateSet({ ...fields, product: state.product, updatedAt: sql<Date>`now()` })
        .where(sql<boolean>`core.subscriptions.provider_updated_at is null or core.subscriptions.provider_updated_at <= ${at}`),
    )
    .execute()
}

/** Moves the status of the rows of a Stripe subscription, unless a newer event wrote them. */
async function setStatus(db: Executor, stripeSubscriptionId: string, status: string, at: Date, from?: string[]) {
  for (const table of ['core.orgProductSubscriptions', 'core.subscriptions'] as const) {
    let query = db
      .updateTable(table)
      .set({ status, providerUpdatedAt: at, updatedAt: sql<Date>`now()` })
      .where('stripeSubscriptionId', '=', stripeSubscriptionId)
      .where((where) => where.or([where('providerUpdatedAt', 'is', null), where('providerUpdatedAt', '<=', at)]))
    if (from) query = query.where('status', 'in', from)
    await query.execute()
  }
}

/** The subscription an invoice is for (its place moved between API versions). */
function subscriptionOfInvoice(invoice: Stripe.Invoice): string | null {
  const parent = (invoice as unknown as { parent?: { subscription_details?: { subscription?: string | { id: string } } } }).parent
  return (
    idOf(parent?.subscription_details?.subscription) ??
    idOf((invoice as unknown as { subscription?: string | { id: string } }).subscription)
  )
}

/**
 * Applies one verified event in the caller's transaction. `readSubscription` reads a subscription
 * back from Stripe (checkout.session.completed names it; the caller fetched it before the
 * transaction). Unknown event types are recorded and ignored.
 */
export async function applyEvent(trx: Executor, event: Stripe.Event, subscriptionOfCheckout?: Stripe.Subscription): Promise<Applied> {
  const at = new Date(event.created * 1000)
  const recorded = await trx
    .insertInto('core.billingEvents')
    .values({ eventId: event.id, type: event.type, createdAt: at })
    .onConflict((conflict) => conflict.column('eventId').doNothing())
    .returning('eventId')
    .executeTakeFirst()
  if (!recorded) return { applied: false }

  switch (event.type) {
    case 'checkout.session.completed': {
      const subscription = subscriptionOfCheckout
      const state = subscription && stateOf(subscription)
      if (subscription && state) await saveSubscription(trx, subscription, state, at)
      break
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscription = event.data.object
      const state = stateOf(subscription, event.type === 'customer.subscription.deleted' ? 'canceled' : subscription.status)
      if (state) await saveSubscription(trx, subscription, state, at)
      break
    }
    case 'invoice.paid': {
      const subscription = subscriptionOfInvoice(event.data.object)
      if (subscription) await setStatus(trx, subscription, 'active', at, ['past_due', 'unpaid', 'incomplete', 'active'])
      break
    }
    case 'invoice.payment_failed': {
      const subscription = subscriptionOfInvoice(event.data.object)
      if (!subscription) break
      await setStatus(trx, subscription, 'past_due', at)
      const row = await trx
        .selectFrom('core.orgProductSubscriptions')
        .select('organizationId')
        .where('stripeSubscriptionId', '=', subscription)
        .executeTakeFirst()
      if (row) return { applied: true, paymentFailed: { organizationId: row.organizationId } }
      break
    }
    default:
      break
  }
  return { applied: true }
}
