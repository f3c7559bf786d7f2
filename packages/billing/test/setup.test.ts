import t from 'tap'
import { startStripeServer } from '@svc/testkit'
import { catalog, ensureCatalog, listCatalog, lookupKey, priceFor, priceOf, stripeClient } from '../src/index.js'

t.test('setup creates the four products and their monthly prices once; running it again creates nothing', async (t) => {
  const server = await startStripeServer(t)
  const stripe = await stripeClient({ secretKey: server.secretKey, apiUrl: server.url })
  t.same(await ensureCatalog(stripe), { createdPrices: 8 })
  t.equal(server.products.size, 4)
  t.equal(server.prices.size, 8)
  t.same(await ensureCatalog(stripe), { createdPrices: 0 }, 'found again by lookup key')
  t.equal(server.prices.size, 8)

  const listed = await listCatalog(stripe)
  t.same(
    listed.map((product) => [product.key, product.prices.map((price) => [price.plan, price.unitAmount, price.interval])]),
    [
      [
        'statuspages',
        [
          ['team', 6500, 'month'],
          ['business', 15000, 'month'],
        ],
      ],
      [
        'alerting',
        [
          ['team', 6500, 'month'],
          ['business', 15000, 'month'],
        ],
      ],
      [
        'synthetics',
        [
          ['team', 6500, 'month'],
          ['business', 15000, 'month'],
        ],
      ],
      [
        'bundle',
        [
          ['team', 15000, 'month'],
          ['business', 40000, 'month'],
        ],
      ],
    ],
  )
  t.equal((await priceFor(stripe, lookupKey('bundle', 'business')))?.unit_amount, 40000)
  t.same(
    priceOf('alerting_team_monthly'),
    catalog.find((price) => price.lookupKey === 'alerting_team_monthly'),
  )
  t.equal(priceOf('someone_elses_price'), undefined)
})

t.test('a product created before its prices (an interrupted setup) is reused, not created twice', async (t) => {
  const server = await startStripeServer(t)
  const stripe = await stripeClient({ secretKey: server.secretKey, apiUrl: server.url })
  await stripe.products.create({ id: 'incident_platform_alerting', name: 'Alerting' })
  t.same(await ensureCatalog(stripe), { createdPrices: 8 })
  t.equal(server.products.size, 4)
})

t.test('a wrong key is refused by the server and the SDK says so', async (t) => {
  const server = await startStripeServer(t)
  const stripe = await stripeClient({ secretKey: 'sk_test_wrong', apiUrl: server.url })
  await t.rejects(ensureCatalog(stripe), { message: 'Invalid API Key provided' } as Error)
})

t.test('the client talks to Stripe itself unless STRIPE_API_URL names another server', async (t) => {
  t.ok(await stripeClient({ secretKey: 'sk_test_x' }))
  t.ok(await stripeClient({ secretKey: 'sk_test_x', apiUrl: 'https://stripe.internal.example' }))
  t.ok(await stripeClient({ secretKey: 'sk_test_x', apiUrl: 'http://stripe.internal.example:8080' }))
})
