import t from 'tap'
import { buildApp } from '@svc/platform'
import { startStripeServer, startTestService } from '@svc/testkit'

// Billing through the real `stripe` SDK, against a loopback server speaking Stripe's wire format.

const stripe = await startStripeServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    billing: {
      secretKey: stripe.secretKey,
      apiUrl: stripe.url,
      successUrl: 'https://app.example/billing/done',
      cancelUrl: 'https://app.example/billing/cancelled',
    },
  },
})
const { app } = service
const db = app.database.db
const admin = await service.signIn('billing-admin@example.com', ['PlatformAdmins'])
const owner = await service.signIn('owner@billing.example')
const member = await service.signIn('member@billing.example')
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Billed Inc', slug: 'billed' })
  .returning('id')
  .executeTakeFirstOrThrow()
await db
  .insertInto('core.organizationMembers')
  .values([
    { organizationId: organization.id, userId: owner.userId, role: 'owner' },
    { organizationId: organization.id, userId: member.userId, role: 'member' },
  ])
  .execute()
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const orgBilling = `/api/v1/billing/organizations/${organization.id}/billing`

t.test('billing is enabled; checkout before setup says setup comes first', async (t) => {
  t.same((await call(member, 'GET', '/api/v1/billing/status')).json(), { enabled: true })
  const early = await call(owner, 'POST', `${orgBilling}/checkout`, { product: 'alerting', plan: 'team' })
  t.equal(early.statusCode, 409)
  t.match(early.json().message, /POST \/api\/v1\/billing\/setup/)
})

t.test('setup is for PlatformAdmins, creates the catalog once, and products lists it', async (t) => {
  t.equal((await call(owner, 'POST', '/api/v1/billing/setup')).statusCode, 403)
  const first = await call(admin, 'POST', '/api/v1/billing/setup')
  t.equal(first.statusCode, 200, first.body)
  t.equal(first.json().createdPrices, 8)
  t.equal((await call(admin, 'POST', '/api/v1/billing/setup')).json().createdPrices, 0, 'found again by lookup key')
  t.equal(stripe.prices.size, 8)
  const products = (await call(admin, 'GET', '/api/v1/billing/products')).json().data
  t.same(
    products.map((product: { key: string; prices: Array<{ plan: string; unitAmount: number }> }) => [
      product.key,
      product.prices.map((price) => price.unitAmount),
    ]),
    [
      ['statuspages', [6500, 15000]],
      ['alerting', [6500, 15000]],
      ['synthetics', [6500, 15000]],
      ['bundle', [15000, 40000]],
    ],
  )
  t.equal((await call(member, 'GET', '/api/v1/billing/products')).statusCode, 403)
})

t.test('an organization’s checkout: owners only, one customer reused, the organization in the metadata', async (t) => {
  t.equal((await call(member, 'POST', `${orgBilling}/checkout`, { product: 'bundle', plan: 'business' })).statusCode, 403)
  const first = await call(owner, 'POST', `${orgBilling}/checkout`, { product: 'bundle', plan: 'business' })
  t.equal(first.statusCode, 200, first.body)
  t.match(first.json().url, new RegExp(`^${stripe.url}/checkout/cs_test_`))
  const second = await call(owner, 'POST', `${orgBilling}/checkout`, { product: 'synthetics', plan: 'team' })
  t.equal(second.statusCode, 200)
  t.equal(stripe.customers.size, 1, 'one Stripe customer for the organization, reused')
  const [customer] = [...stripe.customers.values()]
  t.match(customer, { name: 'Billed Inc', metadata: { organizationId: organization.id } })
  const sessions = [...stripe.checkoutSessions.values()]
  t.match(sessions[0], {
    mode: 'subscription',
    customer: customer!.id,
    client_reference_id: organization.id,
    success_url: 'https://app.example/billing/done',
    cancel_url: 'https://app.example/billing/cancelled',
    metadata: { organizationId: organization.id, product: 'bundle', plan: 'business' },
    subscription_data: { metadata: { organizationId: organization.id, product: 'bundle', plan: 'business' } },
  })
  const bundleBusiness = [...stripe.prices.values()].find((price) => price.lookup_key === 'bundle_business_monthly')!
  t.match(sessions[0]!.line_items, [{ price: bundleBusiness.id, quantity: '1' }])

  const enterprise = await call(owner, 'POST', `${orgBilling}/checkout`, { product: 'alerting', plan: 'enterprise' })
  t.equal(enterprise.statusCode, 400)
  t.match(enterprise.json().message, /contact sales/)
  t.equal((await call(owner, 'POST', `${orgBilling}/checkout`, { product: 'pages', plan: 'team' })).statusCode, 400, 'an unknown product')
  const portal = await call(owner, 'GET', `${orgBilling}/portal`)
  t.match(portal.json().url, new RegExp(`^${stripe.url}/portal/bps_`))
  t.equal(stripe.customers.size, 1)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action'])
    .where('organizationId', '=', organization.id)
    .where('action', 'like', 'billing.%')
    .execute()
  t.equal(audit.length, 2, 'each checkout started is audited')
})

t.test('a personal checkout and portal use the caller’s own customer', async (t) => {
  const response = await call(member, 'POST', '/api/v1/billing/checkout', { product: 'alerting', plan: 'team' })
  t.equal(response.statusCode, 200, response.body)
  const customer = [...stripe.customers.values()].find((one) => one.email === 'member@billing.example')
  t.match(customer, { metadata: { userId: member.userId } })
  t.match((await call(member, 'GET', '/api/v1/billing/portal')).json(), { url: /\/portal\/bps_/ })
  t.equal([...stripe.customers.values()].filter((one) => one.email === 'member@billing.example').length, 1)
})

t.test('Stripe refusing is a 502 that says so', async (t) => {
  const broken = await startTestService(t, buildApp, {
    config: {
      billing: { secretKey: 'sk_test_wrong', apiUrl: stripe.url, successUrl: 'https://a.example/', cancelUrl: 'https://a.example/' },
    },
  })
  const someone = await broken.signIn('someone@example.com')
  const response = await broken.app.inject({
    method: 'POST',
    url: '/api/v1/billing/checkout',
    headers: someone.headers,
    payload: { product: 'alerting', plan: 'team' },
  })
  t.equal(response.statusCode, 502)
  t.match(response.json(), { code: 'UPSTREAM_FAILED', message: /Stripe: Invalid API Key/ })
})

t.test('without STRIPE_SECRET_KEY billing says it is off and every other route answers 503 BILLING_DISABLED', async (t) => {
  const plain = await startTestService(t, buildApp)
  const someone = await plain.signIn('someone@example.com', ['PlatformAdmins'])
  t.same((await plain.app.inject({ method: 'GET', url: '/api/v1/billing/status', headers: someone.headers })).json(), { enabled: false })
  for (const [method, url, payload] of [
    ['POST', '/api/v1/billing/setup', undefined],
    ['GET', '/api/v1/billing/products', undefined],
    ['POST', '/api/v1/billing/checkout', { product: 'alerting', plan: 'team' }],
    ['GET', '/api/v1/billing/portal', undefined],
  ] as const) {
    const response = await plain.app.inject({ method, url, headers: someone.headers, ...(payload ? { payload } : {}) })
    t.equal(response.statusCode, 503, url)
    t.equal(response.json().code, 'BILLING_DISABLED')
  }
})

t.test('an organization created while billing is on needs a plan; one created without billing has every product', async (t) => {
  const created = await call(owner, 'POST', '/api/v1/organizations', { name: 'New Since Billing' })
  t.equal(created.statusCode, 201, created.body)
  const row = await db
    .selectFrom('core.organizations')
    .select('billingExempt')
    .where('id', '=', created.json().id)
    .executeTakeFirstOrThrow()
  t.equal(row.billingExempt, false)
  const plain = await startTestService(t, buildApp)
  const someone = await plain.signIn('selfhosted@example.com')
  const own = await plain.app.inject({
    method: 'POST',
    url: '/api/v1/organizations',
    headers: someone.headers,
    payload: { name: 'Self Hosted' },
  })
  const exempt = await plain.app.database.db
    .selectFrom('core.organizations')
    .select('billingExempt')
    .where('id', '=', own.json().id)
    .executeTakeFirstOrThrow()
  t.equal(exempt.billingExempt, true)
})
