import t from 'tap'
import { ensureCatalog, stripeClient } from '@svc/billing'
import { startStripeServer, startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'

// The product API's subscription routes answer as the platform's personal billing routes do,
// through the real `stripe` SDK against a loopback Stripe-compatible server.

const stripe = await startStripeServer(t)
await ensureCatalog(await stripeClient({ secretKey: stripe.secretKey, apiUrl: stripe.url }))
const service = await startTestService(t, buildApp, {
  config: {
    billing: { secretKey: stripe.secretKey, apiUrl: stripe.url, successUrl: 'https://app.example/ok', cancelUrl: 'https://app.example/no' },
  },
})
const { app } = service
const person = await service.signIn('subscriber@example.com')

t.test('status, checkout and portal for the caller’s own subscription', async (t) => {
  const status = await app.inject({ method: 'GET', url: '/api/v1/users/me/subscription', headers: person.headers })
  t.same(status.json(), { status: 'none', subscriptions: [] })
  const checkout = await app.inject({
    method: 'POST',
    url: '/api/v1/users/me/subscription/checkout',
    headers: person.headers,
    payload: { product: 'statuspages', plan: 'business' },
  })
  t.equal(checkout.statusCode, 200, checkout.body)
  t.match(checkout.json().url, /\/checkout\/cs_test_/)
  const [session] = [...stripe.checkoutSessions.values()]
  t.match(session, { client_reference_id: person.userId, metadata: { userId: person.userId, product: 'statuspages', plan: 'business' } })
  const portal = await app.inject({ method: 'POST', url: '/api/v1/users/me/subscription/portal', headers: person.headers })
  t.match(portal.json().url, /\/portal\/bps_/)
  t.equal(stripe.customers.size, 1, 'one customer for the person, reused')
  const enterprise = await app.inject({
    method: 'POST',
    url: '/api/v1/users/me/subscription/checkout',
    headers: person.headers,
    payload: { product: 'bundle', plan: 'enterprise' },
  })
  t.equal(enterprise.statusCode, 400)
})

t.test('without billing the product API says so too', async (t) => {
  const plain = await startTestService(t, buildApp)
  const someone = await plain.signIn('someone@example.com')
  const response = await plain.app.inject({ method: 'POST', url: '/api/v1/users/me/subscription/portal', headers: someone.headers })
  t.equal(response.statusCode, 503)
  t.equal(response.json().code, 'BILLING_DISABLED')
  t.equal((await plain.app.inject({ method: 'GET', url: '/api/v1/users/me/subscription', headers: someone.headers })).statusCode, 200)
})
