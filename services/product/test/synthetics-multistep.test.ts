import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { sql } from 'kysely'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Multi-step API checks through the API (issue 59): saved only when every step is well formed and
// uses only values an earlier step extracts; a secret fills the login step where the check runs;
// a run keeps each step's outcome, and a failure names its step. The relay runs them too
// (synthetics-relay.test.ts); the runner itself is tested in packages/check-runner.
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    synthetics: {
      region: 'local',
      retentionDays: 30,
      concurrency: 10,
      secretsKey: randomBytes(32).toString('base64'),
      // No Chromium here: the browser kind's refusal and its runs left queued (the last test).
      chromiumPath: '/nonexistent/chromium',
    },
  },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'multistep', {
  manager: { synthetics: 'manager' },
  viewer: { synthetics: 'viewer' },
})
const [manager, viewer] = ['manager', 'viewer'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/synthetics/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

// The target: log in with the password for a token; two calls need it.
let ordersBroken = false
const seenPasswords: string[] = []
const api = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk: Buffer) => (body += chunk.toString()))
  request.on('end', () => {
    if (request.url === '/login') {
      const { password } = JSON.parse(body || '{}') as { password?: string }
      seenPasswords.push(password ?? '')
      if (password !== 'correct horse') return response.writeHead(401).end()
      return response.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"tok-5150"}')
    }
    if (request.headers.authorization !== 'Bearer tok-5150') return response.writeHead(401).end()
    if (request.url === '/orders' && ordersBroken) return response.writeHead(503).end()
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
  })
})
await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise((done) => api.close(done)))
const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`

const definition = (steps: object[]) => ({
  name: 'Shop journey',
  kind: 'multistep',
  frequencySeconds: 60,
  paused: true,
  request: { steps },
})
const journey = [
  {
    name: 'log in',
    method: 'POST',
    url: `${url}/login`,
    headers: { 'content-type': 'application/json' },
    body: '{"password":"{{secret:SHOP_PASSWORD}}"}',
    extract: [{ variable: 'TOKEN', source: 'jsonPath', property: '$.token' }],
  },
  {
    name: 'orders',
    url: `${url}/orders`,
    headers: { authorization: 'Bearer {{TOKEN}}' },
    assertions: [{ source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'ok' }],
  },
  { name: 'profile', url: `${url}/me`, headers: { authorization: 'Bearer {{TOKEN}}' } },
]

t.test('a multi-step check is saved only when every step is well formed', async (t) => {
  await call(manager!, 'PUT', `${base}/secrets/SHOP_PASSWORD`, { value: 'correct horse' })
  const refusals: Array<[object[], RegExp]> = [
    [
      [{ name: 'orders', url: `${url}/orders`, headers: { authorization: 'Bearer {{TOKEN}}' } }],
      /steps\/0 uses \{\{TOKEN\}\}, which no step before it extracts/,
    ],
    [[journey[1]!, journey[0]!], /steps\/0 uses \{\{TOKEN\}\}/],
    [
      [{ ...journey[0]!, extract: [{ variable: 'TOKEN', source: 'body', property: 'token' }] }],
      /steps\/0\/extract\/0\/property needs a group/,
    ],
    [
      [{ ...journey[0]!, extract: [{ variable: 'TOKEN', source: 'jsonPath', property: 'token' }] }],
      /steps\/0\/extract\/0\/property a JSONPath starts with \$/,
    ],
    [[{ ...journey[0]!, body: '{{secret:MISSING}}' }], /steps\/0 refers to the secret MISSING/],
    [[{ name: 'ftp', url: 'ftp://example.com/file' }], /steps\/0\/url must be an http or https URL/],
    [
      [{ name: 'bad', url: `${url}/x`, assertions: [{ source: 'jsonPath', comparison: 'equals', target: 'x' }] }],
      /steps\/0\/assertions\/0\/property/,
    ],
    [[], /steps/],
  ]
  for (const [steps, message] of refusals) {
    const refused = await call(manager!, 'POST', `${base}/checks`, definition(steps))
    t.equal(refused.statusCode, 400, JSON.stringify(steps))
    t.match(refused.json().message, message)
  }
  t.equal((await call(viewer!, 'GET', `${base}/checks`)).json().meta.total, 0, 'nothing refused was saved')
})

t.test('a run carries the token from the login step to two calls, keeps each step, and names the step that fails', async (t) => {
  const created = await call(manager!, 'POST', `${base}/checks`, definition(journey))
  t.equal(created.statusCode, 201, created.body)
  const check = created.json()
  t.equal(check.request.steps[0].body, '{"password":"{{secret:SHOP_PASSWORD}}"}', 'the check shows the reference, not the value')

  const ran = await call(manager!, 'POST', `${base}/checks/${check.id}/run`)
  t.equal(ran.statusCode, 200, ran.body)
  const run = ran.json()
  t.equal(run.status, 'passing', ran.body)
  t.same(
    run.attempts[0].steps.map((step: { name: string; status: string; extracted: string[] }) => [step.name, step.status, step.extracted]),
    [
      ['log in', 'passing', ['TOKEN']],
      ['orders', 'passing', []],
      ['profile', 'passing', []],
    ],
  )
  t.same(seenPasswords, ['correct horse'], 'the secret was filled in where the check ran')
  t.notMatch(ran.body, /correct horse|tok-5150/, 'neither the secret nor the token is in the result')

  ordersBroken = true
  const failed = (await call(manager!, 'POST', `${base}/checks/${check.id}/run`)).json()
  t.match(failed, {
    status: 'failing',
    attempts: [{ error: 'step 2 "orders": assertion failed: jsonPath $.status equals ok (was nothing)', statusCode: 503 }],
  })
  t.same(
    failed.attempts[0].steps.map((step: { status: string }) => step.status),
    ['passing', 'failing'],
    'the step after the failure did not run',
  )
  ordersBroken = false
})

t.test(
  'a service without Chromium refuses a browser check in its region, and leaves one made elsewhere queued for a replica that has it',
  async (t) => {
    const browserCheck = { name: 'Shop page', kind: 'browser', frequencySeconds: 600, request: { script: `await page.goto('${url}/')` } }
    const refused = await call(manager!, 'POST', `${base}/checks`, browserCheck)
    t.equal(refused.statusCode, 400)
    t.match(
      refused.json().message,
      /regions\/0 this service runs no browser check in local: Chromium is not installed where SYNTHETICS_CHROMIUM_PATH says/,
    )
    const check = (await call(manager!, 'POST', `${base}/checks`, { ...definition(journey), name: 'Made where Chromium was' })).json()
    // As a replica with Chromium would have saved it: a browser check of this region.
    await sql`update divinux.synthetic_checks set kind = 'browser', request = ${JSON.stringify(browserCheck.request)}::jsonb,
    paused = false, next_due_at = now() where id = ${check.id}`.execute(app.database.db)
    const run = await until('the due time to be taken', () =>
      app.database.db.selectFrom('divinux.syntheticRuns').selectAll().where('checkId', '=', check.id).executeTakeFirst(),
    )
    t.match(run, { region: 'local', state: 'queued', runnerId: null }, 'queued, not leased by a runner that would fail it')
  },
)
