import t from 'tap'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import { publicCors } from '@svc/http'
import { buildServiceApp } from '@svc/runtime'
import { startTestService } from '@svc/testkit'

// A browser application on a sibling subdomain calls both APIs with its cookies.
const APP = 'https://app.example.com'
const cookies = { allowedOrigins: [APP], domain: 'example.com' }
const platform = await startTestService(t, buildPlatform, { config: { cookies } })
const product = await startTestService(t, buildProduct, { config: { cookies } })

function preflight(origin: string, url: string, method = 'PATCH') {
  return {
    method: 'OPTIONS' as const,
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
  }
}

t.test('a preflight from an allowed origin is answered before authentication, with credentials allowed', async (t) => {
  for (const { app, url } of [
    { app: platform.app, url: '/api/v1/users/me' },
    { app: product.app, url: '/api/v1/organizations/5b1d3f5e-0000-4000-8000-000000000000/alerts' },
  ]) {
    const response = await app.inject(preflight(APP, url))
    t.equal(response.statusCode, 204, url)
    t.equal(response.headers['access-control-allow-origin'], APP)
    t.equal(response.headers['access-control-allow-credentials'], 'true')
    t.match(response.headers['access-control-allow-methods'], /PATCH/)
    t.equal(response.headers['access-control-allow-headers'], 'content-type')
    t.match(response.headers.vary, /Origin/)
  }
})

t.test('another origin gets no CORS headers, so its browser keeps the answer from it', async (t) => {
  const response = await platform.app.inject(preflight('https://evil.example.net', '/api/v1/users/me'))
  t.equal(response.headers['access-control-allow-origin'], undefined, 'without it the browser refuses the preflight')
  const read = await platform.app.inject({
    method: 'GET',
    url: '/api/v1/users/me',
    headers: { origin: 'https://evil.example.net', authorization: `Bearer ${platform.token('cors@example.com')}` },
  })
  t.equal(read.headers['access-control-allow-origin'], undefined, 'and the answer to a request')
})

t.test('the real request answers the allowed origin and exposes Retry-After and the request id', async (t) => {
  const token = platform.token('cors@example.com')
  const response = await platform.app.inject({
    method: 'GET',
    url: '/api/v1/users/me',
    headers: { origin: APP, authorization: `Bearer ${token}` },
  })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['access-control-allow-origin'], APP)
  t.equal(response.headers['access-control-allow-credentials'], 'true')
  t.match(response.headers['access-control-expose-headers'], /Retry-After/)
})

t.test('a public route (config.cors: publicCors) answers any origin with *, without credentials', async (t) => {
  const app = await buildServiceApp(
    { ...product.config },
    {
      name: 'product',
      title: 'Public',
      description: 'a public page',
      async surfaces(app) {
        app.get('/api/v1/statuspages/public/acme/api/v2/status.json', { config: { public: true, cors: publicCors } }, async () => ({
          status: { indicator: 'none' },
        }))
      },
    },
    product.resources,
  )
  t.teardown(() => app.close())
  const response = await app.inject({
    method: 'GET',
    url: '/api/v1/statuspages/public/acme/api/v2/status.json',
    headers: { origin: 'https://anyone.example.org' },
  })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['access-control-allow-origin'], '*')
  t.equal(response.headers['access-control-allow-credentials'], undefined)
})

t.test('an OPTIONS request that is no preflight is a 400, not an authentication error', async (t) => {
  const response = await platform.app.inject({ method: 'OPTIONS', url: '/api/v1/users/me' })
  t.equal(response.statusCode, 400)
})

t.test('without ALLOWED_ORIGINS there is no CORS at all', async (t) => {
  const closed = await startTestService(t, buildPlatform)
  const response = await closed.app.inject(preflight(APP, '/api/v1/users/me'))
  t.equal(response.headers['access-control-allow-origin'], undefined)
  t.equal(response.headers['access-control-allow-credentials'], undefined)
})
