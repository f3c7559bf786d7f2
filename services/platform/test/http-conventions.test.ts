import t from 'tap'
import { buildApp } from '@svc/platform'
import { startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const token = service.token('conventions@example.com')
const auth = { authorization: `Bearer ${token}` }

t.test('an unknown route is a 404 in the error shape', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/api/v1/nothing-here', headers: auth })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { statusCode: 404, error: 'Not Found', message: 'route GET /api/v1/nothing-here not found', code: 'NOT_FOUND' })
})

t.test('PATCH /users/me refuses fields that are not the user own, and changes nothing', async (t) => {
  const before = (await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: auth })).json()
  for (const payload of [
    { isEmployee: true },
    { platformRole: 'GLOBAL_ADMIN' },
    { email: 'x@example.com' },
    { displayName: 'ok', isEmployee: true },
  ]) {
    const response = await app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers: auth, payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    const body = response.json()
    t.equal(body.code, 'VALIDATION_FAILED')
    t.ok(body.details.some((detail: { message: string }) => detail.message === 'is not allowed'))
  }
  const empty = await app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers: auth, payload: {} })
  t.equal(empty.statusCode, 400)
  const row = await app.database.db.selectFrom('core.users').selectAll().where('id', '=', before.userId).executeTakeFirstOrThrow()
  t.match(row, { isEmployee: false, platformRole: null, email: 'conventions@example.com', displayName: null })
})

t.test('PATCH /users/me validates the time zone and names the field', async (t) => {
  const response = await app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers: auth, payload: { timeZone: 'Mars/Olympus' } })
  t.equal(response.statusCode, 400)
  t.match(response.json(), { code: 'VALIDATION_FAILED', details: [{ field: 'timeZone' }] })
})

t.test('PATCH /users/me updates the editable fields', async (t) => {
  const response = await app.inject({
    method: 'PATCH',
    url: '/api/v1/users/me',
    headers: auth,
    payload: { displayName: 'Grace Hopper', timeZone: 'Europe/Berlin' },
  })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { displayName: 'Grace Hopper', timeZone: 'Europe/Berlin', email: 'conventions@example.com' })
  const again = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: auth })
  t.match(again.json(), { displayName: 'Grace Hopper', timeZone: 'Europe/Berlin' }, 'the cached profile was refreshed')
  const cleared = await app.inject({ method: 'PATCH', url: '/api/v1/users/me', headers: auth, payload: { displayName: null } })
  t.equal(cleared.json().displayName, null)
})

t.test('malformed JSON is a 400 and a body over 1 MiB is a 413', async (t) => {
  const malformed = await app.inject({
    method: 'PATCH',
    url: '/api/v1/users/me',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: '{"displayName":',
  })
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.json().code, 'VALIDATION_FAILED')
  const huge = await app.inject({
    method: 'PATCH',
    url: '/api/v1/users/me',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: JSON.stringify({ displayName: 'x'.repeat(1024 * 1024) }),
  })
  t.equal(huge.statusCode, 413)
  t.equal(huge.json().code, 'PAYLOAD_TOO_LARGE')
})

t.test('responses carry security headers', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(response.headers['x-content-type-options'], 'nosniff')
  t.equal(response.headers['x-frame-options'], 'SAMEORIGIN')
  t.match(response.headers['strict-transport-security'], /max-age=/)
  t.match(response.headers['content-security-policy'], /default-src 'none'/)
  t.ok(response.headers['x-request-id'] === undefined || typeof response.headers['x-request-id'] === 'string')
})

t.test('the OpenAPI document describes the routes with their schemas and access', async (t) => {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  t.equal(document.openapi, '3.1.0')
  const paths = Object.keys(document.paths)
  for (const path of [
    '/api/v1/users/me',
    '/api/v1/users/me/subscription',
    '/api/v1/health',
    '/api/v1/health/live',
    '/api/v1/health/ready',
    '/auth/set-cookie',
    '/auth/me',
    '/auth/refresh',
    '/auth/logout',
  ]) {
    t.ok(paths.includes(path), path)
  }
  t.ok(document.paths['/api/v1/users/me'].patch.requestBody, 'PATCH documents its body')
  t.same(document.paths['/auth/logout'].post.security, [], 'public routes say so')
  t.same(document.paths['/api/v1/health/ready'].get.security, [], 'even when they do not declare it themselves')
  t.equal(document.paths['/api/v1/users/me'].get.security, undefined, 'others inherit the document default')
  t.same(document.security, [{ cookieAuth: [] }, { bearerAuth: [] }])
  t.ok(document.components.securitySchemes.bearerAuth)
  const docs = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(docs.statusCode, 200, 'the interactive reference needs no token')
  t.match(docs.headers['content-type'], /text\/html/)
})

t.test('liveness and readiness', async (t) => {
  t.same((await app.inject({ method: 'GET', url: '/api/v1/health' })).json(), { status: 'ok', service: 'platform' })
  t.same((await app.inject({ method: 'GET', url: '/api/v1/health/live' })).json(), { status: 'ok', service: 'platform' })
  const ready = await app.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok', checks: { database: 'ok', jobQueue: 'ok' } })
})

t.test('readiness is 503 when the job queue has stopped, with the database still up', async (t) => {
  const stalled = await startTestService(t, buildApp)
  await stalled.resources.jobs.stop({ graceful: false, wait: true, close: false })
  const ready = await stalled.app.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'unavailable', checks: { database: 'ok', jobQueue: 'unavailable' } })
})

t.test('readiness is 503 when the database is down', async (t) => {
  const broken = await startTestService(t, buildApp)
  await broken.resources.jobs.stop({ graceful: false, wait: true, close: false })
  await broken.resources.database.close()
  const ready = await broken.app.inject({ method: 'GET', url: '/api/v1/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'unavailable', checks: { database: 'unavailable', jobQueue: 'unavailable' } })
  const live = await broken.app.inject({ method: 'GET', url: '/api/v1/health/live' })
  t.equal(live.statusCode, 200, 'the process itself is alive')
})

t.test('an answer within the limit says how much of it is left', async (t) => {
  const limited = await startTestService(t, buildApp, { config: { rateLimit: { max: 3, timeWindow: '1 minute' } } })
  const headers = { authorization: `Bearer ${limited.token('counted@example.com')}` }
  const first = await limited.app.inject({ method: 'GET', url: '/auth/me', headers })
  const second = await limited.app.inject({ method: 'GET', url: '/auth/me', headers })
  t.equal(first.headers['x-ratelimit-limit'], '3')
  t.equal(first.headers['x-ratelimit-remaining'], '2')
  t.equal(second.headers['x-ratelimit-remaining'], '1')
  const reset = Number(first.headers['x-ratelimit-reset'])
  t.ok(reset > 0 && reset <= 60, 'the window resets within its minute')
  t.notOk(first.headers['retry-after'], 'Retry-After only once the limit is reached')
})

t.test('rate limits answer 429 with Retry-After', async (t) => {
  const limited = await startTestService(t, buildApp, { config: { rateLimit: { max: 3, timeWindow: '1 minute' } } })
  const statuses: number[] = []
  let last
  for (let attempt = 0; attempt < 5; attempt += 1) {
    last = await limited.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${limited.token('busy@example.com')}` },
    })
    statuses.push(last.statusCode)
  }
  t.same(statuses, [200, 200, 200, 429, 429])
  t.equal(last?.json().code, 'RATE_LIMITED')
  t.match(last?.json().message, /^Rate limit exceeded, retry in \d+ (second|minute|hour)s?$/)
  t.ok(Number(last?.headers['retry-after']) > 0)
  t.equal(last?.headers['x-ratelimit-limit'], '3')
  t.equal(last?.headers['x-ratelimit-remaining'], '0')
  t.equal(last?.headers['x-ratelimit-reset'], last?.headers['retry-after'])
  const probe = await limited.app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(probe.statusCode, 200, 'health probes are not rate limited')
})
