import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import qs from 'qs'
import type { TestContext } from '../teardown.js'

// A loopback server speaking Stripe's wire format for the calls billing makes: form-encoded
// requests (nested keys as `a[b][0]`), JSON objects with Stripe's fields, list envelopes, error
// bodies, Bearer authentication and Idempotency-Key replays. The real `stripe` SDK talks to it
// through STRIPE_API_URL.

type StripeObject = Record<string, unknown> & { id: string }

/** One API call as the server received it. */
export interface StripeCall {
  method: string
  path: string
  params: Record<string, unknown>
  idempotencyKey?: string
}

export interface StripeTestServer {
  /** STRIPE_API_URL for the service under test. */
  url: string
  secretKey: string
  calls: StripeCall[]
  products: Map<string, StripeObject>
  prices: Map<string, StripeObject>
  customers: Map<string, StripeObject>
  checkoutSessions: Map<string, StripeObject>
  /** Subscriptions `GET /v1/subscriptions/:id` answers; tests put them here as Stripe would hold them. */
  subscriptions: Map<string, StripeObject>
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`
const now = () => Math.floor(Date.now() / 1000)

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') }).end(JSON.stringify(body))
}

const missing = (response: ServerResponse, what: string, key: string) =>
  send(response, 404, {
    error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${key}'`, param: 'id' },
  })

const list = (data: unknown[], url: string) => ({ object: 'list', data, has_more: false, url })

const numberOf = (value: unknown) => (value === undefined ? undefined : Number(value))

export async function startStripeServer(t: TestContext): Promise<StripeTestServer> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`
  const state: Omit<StripeTestServer, 'url' | 'secretKey'> = {
    calls: [],
    products: new Map(),
    prices: new Map(),
    customers: new Map(),
    checkoutSessions: new Map(),
    subscriptions: new Map(),
  }
  const replays = new Map<string, { status: number; body: unknown }>()
  let base = ''

  function route(
    method: string,
    path: string,
    params: Record<string, unknown>,
  ): { status: number; body: unknown } | ((response: ServerResponse) => void) {
    const [, , resource, key] = path.split('/')
    if (method === 'POST' && path === '/v1/products') {
      const productId = (params.id as string | undefined) ?? id('prod')
      if (state.products.has(productId))
        return {
          status: 400,
          body: {
            error: { type: 'invalid_request_error', code: 'resource_already_exists', message: `Product already exists.`, param: 'id' },
          },
        }
      const product = {
        id: productId,
        object: 'product',
        active: true,
        name: params.name,
        metadata: params.metadata ?? {},
        created: now(),
        livemode: false,
      }
      state.products.set(productId, product)
      return { status: 200, body: product }
    }
    if (method === 'GET' && resource === 'products' && key) {
      const product = state.products.get(key)
      return product ? { status: 200, body: product } : (response) => missing(response, 'product', key)
    }
    if (method === 'POST' && path === '/v1/prices') {
      const recurring = params.recurring as { interval?: string } | undefined
      const price = {
        id: id('price'),
        object: 'price',
        active: true,
        product: params.product,
        unit_amount: numberOf(params.unit_amount) ?? null,
        currency: params.currency,
        recurring: recurring ? { interval: recurring.interval, interval_count: 1, usage_type: 'licensed' } : null,
        type: recurring ? 'recurring' : 'one_time',
        lookup_key: params.lookup_key ?? null,
        metadata: params.metadata ?? {},
        created: now(),
        livemode: false,
      }
      state.prices.set(price.id, price)
      return { status: 200, body: price }
    }
    if (method === 'GET' && path === '/v1/prices') {
      const keys = (params.lookup_keys as string[] | undefined) ?? []
      const found = [...state.prices.values()].filter(
        (price) =>
          (keys.length === 0 || keys.includes(price.lookup_key as string)) &&
          (params.active === undefined || String(price.active) === params.active),
      )
      return { status: 200, body: list(found.slice(0, Number(params.limit ?? 10)), '/v1/prices') }
    }
    if (method === 'POST' && path === '/v1/customers') {
      const customer = {
        id: id('cus'),
        object: 'customer',
        email: params.email ?? null,
        name: params.name ?? null,
        metadata: params.metadata ?? {},
        created: now(),
        livemode: false,
      }
      state.customers.set(customer.id, customer)
      return { status: 200, body: customer }
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (typeof params.customer !== 'string' || !state.customers.has(params.customer))
        return {
          status: 400,
          body: { error: { type: 'invalid_request_error', message: `No such customer: '${String(params.customer)}'`, param: 'customer' } },
        }
      const items = (params.line_items as Array<{ price: string; quantity?: string }> | undefined) ?? []
      const unknown = items.find((item) => !state.prices.has(item.price))
      if (unknown)
        return {
          status: 400,
          body: { error: { type: 'invalid_request_error', message: `No such price: '${unknown.price}'`, param: 'line_items[0][price]' } },
        }
      const session = {
        id: id('cs_test'),
        object: 'checkout.session',
        mode: params.mode,
        customer: params.customer,
        client_reference_id: params.client_reference_id ?? null,
        metadata: params.metadata ?? {},
        subscription_data: params.subscription_data ?? null,
        line_items: items,
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        status: 'open',
        subscription: null,
        url: `${base}/checkout/pay`,
        created: now(),
        livemode: false,
      }
      session.url = `${base}/checkout/${session.id}`
      state.checkoutSessions.set(session.id, session)
      return { status: 200, body: session }
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (typeof params.customer !== 'string' || !state.customers.has(params.customer))
        return {
          status: 400,
          body: { error: { type: 'invalid_request_error', message: `No such customer: '${String(params.customer)}'`, param: 'customer' } },
        }
      const portal = {
        id: id('bps'),
        object: 'billing_portal.session',
        customer: params.customer,
        return_url: params.return_url ?? null,
        created: now(),
        livemode: false,
        url: '',
      }
      portal.url = `${base}/portal/${portal.id}`
      return { status: 200, body: portal }
    }
    if (method === 'GET' && resource === 'subscriptions' && key) {
      const subscription = state.subscriptions.get(key)
      return subscription ? { status: 200, body: subscription } : (response) => missing(response, 'subscription', key)
    }
    return (response) => missing(response, 'route', `${method} ${path}`)
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    let text = ''
    for await (const chunk of request) text += String(chunk)
    const url = new URL(request.url ?? '/', 'http://stripe.test')
    if (request.headers.authorization !== `Bearer ${secretKey}`)
      return send(response, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } })
    const params = qs.parse(request.method === 'GET' ? url.search.slice(1) : text, { depth: 5, arrayLimit: 100 }) as Record<string, unknown>
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined
    state.calls.push({ method: request.method ?? 'GET', path: url.pathname, params, ...(idempotencyKey ? { idempotencyKey } : {}) })
    // Stripe answers a replayed key with the first answer, whatever the new request says.
    const replay = idempotencyKey ? replays.get(idempotencyKey) : undefined
    if (replay) return send(response, replay.status, replay.body)
    const answer = route(request.method ?? 'GET', url.pathname, params)
    if (typeof answer === 'function') return answer(response)
    if (idempotencyKey && request.method === 'POST') replays.set(idempotencyKey, answer)
    return send(response, answer.status, answer.body)
  }

  const server = createServer((request, response) => void handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: base, secretKey, ...state }
}
