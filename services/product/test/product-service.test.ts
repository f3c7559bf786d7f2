import t from 'tap'
import { buildApp } from '@svc/product'
import { censusOf } from '@svc/jobs'
import { jobQueueErrors } from '@svc/metrics'
import { startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service

t.test('the product API answers its health check', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { status: 'ok', service: 'product' })
  const ready = await app.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 200, 'the product API has its probes too')
  t.same(ready.json(), { status: 'ok', checks: { database: 'ok', jobQueue: 'ok' } })
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/health/live' })).statusCode, 200)
})

t.test('the product API shares the identity scheme and the cookie endpoints', async (t) => {
  const token = service.token('product@example.com', ['PlatformAdmins'])
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })
  t.equal(me.statusCode, 200)
  t.match(me.json(), { email: 'product@example.com', isPlatformAdmin: true })

  const session = await app.inject({ method: 'POST', url: '/auth/set-cookie', payload: { idToken: token } })
  t.equal(session.statusCode, 200)
  const cookie = (session.cookies as Array<{ name: string; value: string }>).find((entry) => entry.name === 'svc_id_token')
  const viaCookie = await app.inject({ method: 'GET', url: '/auth/me', cookies: { svc_id_token: cookie?.value ?? '' } })
  t.same(viaCookie.json(), me.json())

  const logout = await app.inject({ method: 'POST', url: '/auth/logout' })
  t.equal(logout.statusCode, 204)
  const anonymous = await app.inject({ method: 'GET', url: '/auth/me' })
  t.equal(anonymous.statusCode, 401)
})

t.test('the product API publishes its own OpenAPI document and reference', async (t) => {
  const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()
  t.equal(document.info.title, 'Product API')
  t.ok(document.paths['/auth/me'])
  t.equal((await app.inject({ method: 'GET', url: '/docs/' })).statusCode, 200)

  // A body property with a default may be left out; in the answer it is always there.
  const schedules = document.paths['/api/v1/organizations/{orgId}/schedules']
  const layerIn = schedules.post.requestBody.content['application/json'].schema.properties.layers.items
  t.notOk(layerIn.required.includes('restriction'), 'a layer’s restriction is optional in a request')
  t.ok(layerIn.required.includes('users'), 'properties without a default stay required')
  const layerOut = schedules.post.responses['201'].content['application/json'].schema.properties.layers.items
  t.ok(layerOut.required.includes('restriction'), 'and present in every answer')
})

t.test('the job census asks for the alerting tables’ work in its one statement, and that statement runs', async (t) => {
  const census = censusOf(app.jobs)!
  t.ok(census, 'the product’s job queue has a census')
  const looksFor = (pattern: RegExp) => census.conditions.filter((condition) => pattern.test(condition)).length
  t.equal(looksFor(/divinux\.alert_events\b/), 1, 'the alert event dispatcher')
  t.equal(looksFor(/state = 'pending'/), 1, 'the escalation starter')
  t.equal(looksFor(/state = 'acknowledged'/), 1, 'the repager')
  t.equal(looksFor(/divinux\.incident_timeline\b/), 1, 'the incident change dispatcher')
  t.equal(looksFor(/divinux\.incidents\b/), 1, 'the Slack incident sync')
  const errorsBefore = (await jobQueueErrors.get()).values[0]?.value ?? 0
  await census.look()
  t.equal(
    (await jobQueueErrors.get()).values[0]?.value ?? 0,
    errorsBefore,
    'no error: a condition that no longer reads would stop every look',
  )
})
