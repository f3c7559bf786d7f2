import Stripe from 'stripe'
import t from 'tap'
import { ensureCatalog, stripeClient } from '@svc/billing'
import { buildApp } from '@svc/platform'
import { startStripeServer, startTestService } from '@svc/testkit'

// Stripe's events, signed with the SDK's own test header (`generateTestHeaderString`): applied
// once, never backwards, forged ones refused.

const webhookSecret = 'whsec_billingtestsecret'
const stripe = await startStripeServer(t)
await ensureCatalog(await stripeClient({ secretKey: stripe.secretKey, apiUrl: stripe.url }))
const service = await startTestService(t, buildApp, {
  config: {
    billing: {
      secretKey: stripe.secretKey,
      apiUrl: stripe.url,
      webhookSecret,
      successUrl: 'https://a.example/ok',
      cancelUrl: 'https://a.example/no',
    },
  },
})
const { app } = service
const db = app.database.db
const sdk = new Stripe(stripe.secretKey)
const owner = await service.signIn('owner@webhook.example')
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Webhook Co', slug: 'webhook-co' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId: owner.userId, role: 'owner' }).execute()

const base = Math.floor(Date.now() / 1000)
let sequence = 0
function subscription(status: string, overrides: Record<string, unknown> = {}) {
  return {
    id: 'sub_webhook_1',
    object: 'subscription',
    customer: 'cus_webhook_1',
    status,
    cancel_at_period_end: false,
    metadata: { organizationId: organization.id, product: 'alerting', plan: 'team' },
    items: {
      object: 'list',
      data: [{ id: 'si_1', price: { id: 'price_x', lookup_key: 'alerting_team_monthly' }, current_period_end: base + 30 * 86_400 }],
    },
    ...overrides,
  }
}
function event(type: string, object: object, createdOffset = 0, id = `evt_${++sequence}`) {
  return {
    id,
    object: 'event',
    type,
    created: base + createdOffset,
    api_version: '2025-01-01',
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: null,
  }
}
async function deliver(payload: object, options: { secret?: string; timestamp?: number } = {}) {
  const body = JSON.stringify(payload)
  const signature = sdk.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? webhookSecret,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  })
  return app.inject({
    method: 'POST',
    url: '/api/v1/billing/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    payload: body,
  })
}
const alerting = () =>
  db
    .selectFrom('core.orgProductSubscriptions')
    .selectAll()
    .where('organizationId', '=', organization.id)
    .where('product', '=', 'alerting')
    .executeTakeFirst()

t.test('a completed checkout reads its subscription back from Stripe and the organization has the product', async (t) => {
  stripe.subscriptions.set('sub_webhook_1', subscription('active'))
  const completed = event('checkout.session.completed', {
    id: 'cs_1',
    object: 'checkout.session',
    mode: 'subscription',
    subscription: 'sub_webhook_1',
    customer: 'cus_webhook_1',
    metadata: {},
  })
  const response = await deliver(completed)
  t.equal(response.statusCode, 200, response.body)
  t.same(response.json(), { received: true })
  t.match(await alerting(), {
    plan: 'team',
    status: 'active',
    stripeSubscriptionId: 'sub_webhook_1',
    stripeCustomerId: 'cus_webhook_1',
    cancelAtPeriodEnd: false,
  })
  const shown = await app.inject({ method: 'GET', url: `/api/v1/organizations/${organization.id}/subscription`, headers: owner.headers })
  t.match(
    shown.json().products.find((product: { product: string }) => product.product === 'alerting'),
    { plan: 'team', status: 'active', source: 'product' },
  )

  const replayed = await deliver(completed)
  t.same(replayed.json(), { received: true, duplicate: true }, 'the same event id again: acknowledged, nothing changes')
  t.equal((await db.selectFrom('core.billingEvents').selectAll().where('eventId', '=', completed.id).execute()).length, 1)
})

t.test('forged, tampered and stale signatures are refused and change nothing', async (t) => {
  const before = await alerting()
  const cancel = event('customer.subscription.deleted', subscription('canceled'), 60)
  const forged = await deliver(cancel, { secret: 'whsec_someoneelse' })
  t.equal(forged.statusCode, 400)
  t.match(forged.json().message, /stripe-signature/)
  const stale = await deliver(cancel, { timestamp: base - 600 })
  t.equal(stale.statusCode, 400, 'older than the 300 s tolerance')
  const body = JSON.stringify(cancel)
  const signature = sdk.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret })
  const tampered = await app.inject({
    method: 'POST',
    url: '/api/v1/billing/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    payload: body.replace('canceled', 'active'),
  })
  t.equal(tampered.statusCode, 400)
  const unsigned = await app.inject({
    method: 'POST',
    url: '/api/v1/billing/webhook',
    headers: { 'content-type': 'application/json' },
    payload: body,
  })
  t.equal(unsigned.statusCode, 400)
  t.same(await alerting(), before)
  t.equal((await db.selectFrom('core.billingEvents').selectAll().where('eventId', '=', cancel.id).execute()).length, 0)
})

t.test('events arriving out of order never move a subscription backwards', async (t) => {
  const newer = event('customer.subscription.updated', subscription('active', { cancel_at_period_end: true }), 20)
  const older = event('customer.subscription.updated', subscription('incomplete'), 10)
  t.equal((await deliver(newer)).statusCode, 200)
  t.equal((await deliver(older)).statusCode, 200, 'acknowledged')
  t.match(await alerting(), { status: 'active', cancelAtPeriodEnd: true }, 'the older event changed nothing')
})

t.test('a failed payment makes the organization past due and e-mails its owners; a paid invoice makes it active', async (t) => {
  const failed = event(
    'invoice.payment_failed',
    { id: 'in_1', object: 'invoice', customer: 'cus_webhook_1', parent: { subscription_details: { subscription: 'sub_webhook_1' } } },
    30,
  )
  t.equal((await deliver(failed)).statusCode, 200)
  t.match(await alerting(), { status: 'past_due' })
  const mails = await db.selectFrom('core.outbox').selectAll().where('kind', '=', 'billing.payment_failed').execute()
  t.equal(mails.length, 1)
  t.match(mails[0], { recipient: 'owner@webhook.example', organizationId: organization.id, subject: /Payment failed for Webhook Co/ })
  const paid = event('invoice.paid', { id: 'in_2', object: 'invoice', customer: 'cus_webhook_1', subscription: 'sub_webhook_1' }, 40)
  t.equal((await deliver(paid)).statusCode, 200)
  t.match(await alerting(), { status: 'active' })
})

t.test('cancellation; unknown event types are acknowledged and ignored', async (t) => {
  t.equal((await deliver(event('customer.subscription.deleted', subscription('canceled'), 50))).statusCode, 200)
  t.match(await alerting(), { status: 'canceled' })
  const unknown = await deliver(event('customer.created', { id: 'cus_other', object: 'customer' }, 55))
  t.same(unknown.json(), { received: true })
})

t.test('a personal subscription is kept as the person’s own', async (t) => {
  const person = await service.signIn('solo@webhook.example')
  const personal = subscription('active', {
    id: 'sub_personal',
    customer: 'cus_solo',
    metadata: { userId: person.userId, product: 'synthetics', plan: 'business' },
    items: { object: 'list', data: [{ id: 'si_p', price: { id: 'price_p', lookup_key: 'synthetics_business_monthly' } }] },
  })
  t.equal((await deliver(event('customer.subscription.created', personal, 5))).statusCode, 200)
  const status = await app.inject({ method: 'GET', url: '/api/v1/users/me/subscription', headers: person.headers })
  t.match(status.json(), {
    status: 'active',
    subscriptions: [{ source: 'personal', product: 'synthetics', plan: 'business', status: 'active' }],
  })
})

t.test('a subscription without our metadata is matched by its price and its customer; one not ours changes nothing', async (t) => {
  await db.insertInto('core.billingCustomers').values({ organizationId: organization.id, stripeCustomerId: 'cus_portal_made' }).execute()
  const bare = {
    ...subscription('active', { id: 'sub_from_portal', customer: 'cus_portal_made', metadata: {} }),
    items: { object: 'list', data: [{ id: 'si_2', price: { id: 'price_y', lookup_key: 'statuspages_business_monthly' } }] },
    current_period_end: base + 3600,
  }
  t.equal((await deliver(event('customer.subscription.created', bare, 70))).statusCode, 200)
  const row = await db
    .selectFrom('core.orgProductSubscriptions')
    .selectAll()
    .where('stripeSubscriptionId', '=', 'sub_from_portal')
    .executeTakeFirstOrThrow()
  t.match(row, { product: 'statuspages', plan: 'business', status: 'active' })
  t.equal(row.currentPeriodEnd?.getTime(), (base + 3600) * 1000)

  const foreign = {
    ...bare,
    id: 'sub_foreign',
    customer: 'cus_unknown',
    items: { object: 'list', data: [{ id: 'si_3', price: { id: 'p', lookup_key: 'someone_elses' } }] },
  }
  t.equal((await deliver(event('customer.subscription.created', foreign, 71))).statusCode, 200)
  const strangers = { ...bare, id: 'sub_stranger', customer: 'cus_unknown' }
  t.equal((await deliver(event('customer.subscription.created', strangers, 72))).statusCode, 200)
  t.equal(
    (
      await db
        .selectFrom('core.orgProductSubscriptions')
        .select('id')
        .where('stripeSubscriptionId', 'in', ['sub_foreign', 'sub_stranger'])
        .execute()
    ).length,
    0,
  )
  t.equal(
    (await deliver(event('invoice.payment_failed', { id: 'in_x', object: 'invoice', customer: 'cus_unknown' }, 73))).statusCode,
    200,
    'an invoice of no subscription',
  )
  t.equal(
    (
      await deliver(
        event('checkout.session.completed', { id: 'cs_x', object: 'checkout.session', mode: 'payment', subscription: null }, 74),
      )
    ).statusCode,
    200,
  )
})

t.test('without a webhook secret the webhook answers 503', async (t) => {
  const other = await startTestService(t, buildApp, {
    config: {
      billing: { secretKey: stripe.secretKey, apiUrl: stripe.url, successUrl: 'https://a.example/', cancelUrl: 'https://a.example/' },
    },
  })
  const response = await other.app.inject({
    method: 'POST',
    url: '/api/v1/billing/webhook',
    headers: { 'content-type': 'application/json' },
    payload: '{}',
  })
  t.equal(response.statusCode, 503)
  t.equal(response.json().code, 'BILLING_DISABLED')
})

t.test('a plan changed in the billing portal follows the new price, though the metadata still names the old plan', async (t) => {
  const upgraded = (lookup: string) =>
    subscription('active', {
      id: 'sub_portal_upgrade',
      customer: 'cus_upgrade',
      items: { object: 'list', data: [{ id: 'si_u', price: { id: `price_${lookup}`, lookup_key: lookup } }] },
    })
  t.equal((await deliver(event('customer.subscription.created', upgraded('alerting_team_monthly'), 200))).statusCode, 200)
  const planOf = async () =>
    (
      await db
        .selectFrom('core.orgProductSubscriptions')
        .select(['product', 'plan'])
        .where('stripeSubscriptionId', '=', 'sub_portal_upgrade')
        .executeTakeFirstOrThrow()
    ).plan
  t.equal(await planOf(), 'team')
  // The portal swaps the item's price; Stripe leaves the subscription's metadata (plan: team) alone.
  t.equal((await deliver(event('customer.subscription.updated', upgraded('alerting_business_monthly'), 201))).statusCode, 200)
  t.equal(await planOf(), 'business')
})
