import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql } from 'kysely'
import t from 'tap'
import { MAINTENANCE_QUEUE } from '@svc/plugin-synthetics'
import { CHROMIUM, chromiumPresent, entryPointArgs, startTestService, until, workspaceRoot } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Relays as they run in production: `services/relay/src/main.ts` in a process of its own, talking
// to the product API over HTTP. It leases runs, posts results and heartbeats; one that stops
// reporting is unhealthy after 3 missed heartbeats, its runs go to another relay, its regions show
// unknown.

const root = workspaceRoot()
const service = await startTestService(t, buildApp, { config: { outbound: { allowPrivateTargets: true } } })
const { app } = service
const db = app.database.db
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const { orgId, person } = await alertingOrganization(service, 'relays', { manager: { synthetics: 'manager' } })
const manager = person('manager')
const base = `/api/v1/synthetics/organizations/${orgId}`
const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: manager.headers, ...(payload ? { payload } : {}) })
const asRelay = (key: string, url: string, payload: object) =>
  app.inject({ method: 'POST', url: `/api/v1/synthetics/relay/${url}`, headers: { authorization: `Bearer ${key}` }, payload })

let delayMs = 0
const target = createServer((_request: IncomingMessage, response: ServerResponse) => {
  setTimeout(() => response.end('ok'), delayMs)
})
await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise((done) => target.close(done)))
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`

function startRelay(key: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, entryPointArgs('services/relay/src/main.ts'), {
    cwd: root,
    env: {
      ...process.env,
      RELAY_URL: address,
      RELAY_KEY: key,
      RELAY_POLL_SECONDS: '0.2',
      ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  return child
}

/** Makes the check's next run due now (what time would do). */
async function dueNow(checkId: string) {
  await sql`update divinux.synthetic_checks set next_due_at = now() where id = ${checkId}`.execute(db)
}
const runsOf = (checkId: string) =>
  db.selectFrom('divinux.syntheticRuns').selectAll().where('checkId', '=', checkId).orderBy('dueAt').execute()

t.test('a check of a relay region is refused until a relay serves it; the relay process runs it', async (t) => {
  const refused = await call('POST', `${base}/checks`, {
    name: 'Intranet',
    kind: 'http',
    frequencySeconds: 30,
    regions: ['office'],
    request: { url: targetUrl },
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /regions\/0 no runner serves office/)
  t.equal(
    (await call('POST', `${base}/relays`, { name: 'Own', regions: ['local'] })).statusCode,
    400,
    'the service’s own region is not a relay’s',
  )

  const relay = (await call('POST', `${base}/relays`, { name: 'Office', regions: ['office'], heartbeatSeconds: 1 })).json()
  t.match(relay, { name: 'Office', regions: ['office'], healthy: false, key: /^rly_/ })
  t.equal((await call('GET', `${base}/relays/${relay.id}`)).json().key, undefined, 'the key is shown once')
  const check = (
    await call('POST', `${base}/checks`, {
      name: 'Intranet',
      kind: 'http',
      frequencySeconds: 30,
      regions: ['office'],
      request: { url: targetUrl },
    })
  ).json()

  const process = startRelay(relay.key)
  const [run] = await until('the relay’s first result', async () => {
    const runs = await runsOf(check.id)
    return runs[0]?.state === 'done' ? runs : undefined
  })
  t.match(run, { region: 'office', relayId: relay.id, status: 'passing', statusCode: 200 })
  t.ok(run!.resultId, 'stored with the relay’s result id')
  await until('the check to pass', async () => (await call('GET', `${base}/checks/${check.id}`)).json().state === 'passing')
  t.match((await call('GET', `${base}/relays`)).json().data, [{ id: relay.id, healthy: true }])

  // The target turns slow; the relay leases the next run and is killed while it runs.
  delayMs = 4000
  await dueNow(check.id)
  await until('the next run to be leased', async () => (await runsOf(check.id)).find((one) => one.state === 'leased'))
  process.kill('SIGKILL')
  await until('the relay to be unhealthy', async () => (await call('GET', `${base}/relays/${relay.id}`)).json().healthy === false, 10_000)
  const shown = (await call('GET', `${base}/checks/${check.id}`)).json()
  t.match(shown.regionStates, [{ region: 'office', status: 'unknown' }], 'its region shows unknown, not its last passing result')
  t.equal(shown.state, 'unknown', 'and the check’s state agrees with it in the same answer, before any maintenance run')
  const listed = (await call('GET', `${base}/checks?limit=100`)).json().data.find((one: { id: string }) => one.id === check.id)
  t.match(listed, { state: 'unknown', regionStates: [{ status: 'unknown' }] }, 'the list too')
  await app.jobs.send(MAINTENANCE_QUEUE, {})
  await until('the stored state to follow', async () =>
    (await db.selectFrom('divinux.syntheticChecks').select('state').where('id', '=', check.id).executeTakeFirstOrThrow()).state ===
    'unknown'
      ? true
      : undefined,
  )

  // Another relay of the region takes the run the dead one held.
  const backup = (await call('POST', `${base}/relays`, { name: 'Office 2', regions: ['office'], heartbeatSeconds: 1 })).json()
  delayMs = 0
  startRelay(backup.key)
  const taken = await until('the held run to be run by the other relay', async () =>
    (await runsOf(check.id)).find((one) => one.state === 'done' && one.relayId === backup.id),
  )
  t.equal(taken.status, 'passing')
  await until('the check to pass again', async () => (await call('GET', `${base}/checks/${check.id}`)).json().state === 'passing')
})

t.test('the relay API: its key is required, results are recorded once, runs it did not lease are refused', async (t) => {
  t.equal((await asRelay('rly_wrong', 'heartbeat', {})).statusCode, 401)
  const manual = (await call('POST', `${base}/relays`, { name: 'Manual', regions: ['lab'] })).json()
  const heartbeat = await asRelay(manual.key, 'heartbeat', {})
  t.match(heartbeat.json(), { relayId: manual.id, regions: ['lab'], heartbeatSeconds: 10 })
  const check = (
    await call('POST', `${base}/checks`, { name: 'Lab', kind: 'http', frequencySeconds: 60, regions: ['lab'], request: { url: targetUrl } })
  ).json()
  const { runs } = await until('a run to lease', async () => {
    const leased = (await asRelay(manual.key, 'lease', { max: 5 })).json()
    return leased.runs.length > 0 ? leased : undefined
  })
  t.match(runs, [{ checkId: check.id, region: 'lab', check: { kind: 'http', request: { url: targetUrl } } }])
  const result = {
    id: 'result-1',
    runId: runs[0].runId,
    status: 'failing',
    attempts: [
      {
        status: 'failing',
        startedAt: new Date().toISOString(),
        timings: { total: 12 },
        assertions: [],
        error: 'HTTP 503',
        statusCode: 503,
        screenshot: Buffer.from('<script>not a PNG</script>').toString('base64'),
      },
    ],
  }
  t.same((await asRelay(manual.key, 'results', { results: [result] })).json(), { recorded: 1, duplicates: 0 })
  t.same((await asRelay(manual.key, 'results', { results: [result] })).json(), { recorded: 0, duplicates: 1 }, 'sent again: ignored')
  t.equal((await runsOf(check.id)).filter((run) => run.state === 'done').length, 1, 'recorded once')
  const [stored] = (await call('GET', `${base}/checks/${check.id}/results`)).json().data
  t.notOk(
    'screenshotUrl' in stored.attempts[0] || 'screenshot' in stored.attempts[0],
    'bytes that are not a PNG are not kept as a screenshot',
  )
  const again = await asRelay(manual.key, 'results', { results: [{ ...result, id: 'result-2' }] })
  t.equal(again.statusCode, 409, 'a second result for a run: refused')

  const office = (await db.selectFrom('divinux.syntheticRuns').select('id').where('region', '=', 'office').executeTakeFirstOrThrow()).id
  const stolen = await asRelay(manual.key, 'results', { results: [{ ...result, id: 'result-3', runId: office }] })
  t.equal(stolen.statusCode, 409)
  t.match(stolen.json().message, /results\/0\/runId: run .* is not leased by this relay/)
  const doubled = await asRelay(manual.key, 'results', { results: [result, result] })
  t.equal(doubled.statusCode, 400, 'one id twice in a batch')
  await until('the check to fail', async () => (await call('GET', `${base}/checks/${check.id}`)).json().state === 'failing')
  t.equal((await call('DELETE', `${base}/relays/${manual.id}`)).statusCode, 204)
  t.equal((await asRelay(manual.key, 'heartbeat', {})).statusCode, 401, 'a deleted relay’s key stops working')
})

t.test('a relay runs a multi-step check: the token of its login step reaches the next, each step kept', async (t) => {
  const login = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.url === '/login') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"relay-tok"}')
    response.writeHead(request.headers.authorization === 'Bearer relay-tok' ? 200 : 401).end()
  })
  await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((done) => login.close(done)))
  const api = `http://127.0.0.1:${(login.address() as AddressInfo).port}`
  const relay = (await call('POST', `${base}/relays`, { name: 'Branch', regions: ['branch'], heartbeatSeconds: 1 })).json()
  const check = (
    await call('POST', `${base}/checks`, {
      name: 'Branch journey',
      kind: 'multistep',
      frequencySeconds: 60,
      regions: ['branch'],
      request: {
        steps: [
          {
            name: 'log in',
            method: 'POST',
            url: `${api}/login`,
            extract: [{ variable: 'TOKEN', source: 'jsonPath', property: '$.token' }],
          },
          { name: 'account', url: `${api}/account`, headers: { authorization: 'Bearer {{TOKEN}}' } },
        ],
      },
    })
  ).json()
  startRelay(relay.key)
  const run = await until('the relay’s result', async () => (await runsOf(check.id)).find((one) => one.state === 'done'))
  t.match(run, { region: 'branch', relayId: relay.id, status: 'passing' })
  const attempts = run.attempts as Array<{ steps: Array<{ name: string; status: string; extracted: string[] }> }>
  t.same(
    attempts[0]!.steps.map((step) => [step.name, step.status, step.extracted]),
    [
      ['log in', 'passing', ['TOKEN']],
      ['account', 'passing', []],
    ],
  )
})

const script = `await page.goto('${targetUrl}')\nawait expect(page.locator('body')).toHaveText('welcome', { timeout: 500 })`
const browserCheck = {
  name: 'Kiosk page',
  kind: 'browser',
  frequencySeconds: 600,
  timeoutMs: 20_000,
  regions: ['kiosk'],
  request: { script },
}

t.test('a relay without Chromium says so, and a browser check of its region alone is refused', async (t) => {
  const plain = (await call('POST', `${base}/relays`, { name: 'Kiosk plain', regions: ['kiosk'], heartbeatSeconds: 1 })).json()
  startRelay(plain.key, { RELAY_CHROMIUM_PATH: '/nonexistent/chromium' })
  await until('the plain relay to heartbeat', async () => (await call('GET', `${base}/relays/${plain.id}`)).json().healthy)
  t.equal((await call('GET', `${base}/relays/${plain.id}`)).json().browser, false)
  const refused = await call('POST', `${base}/checks`, browserCheck)
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /regions\/0 no relay of kiosk has said it has Chromium/)
})

t.test('browser checks go only to a relay that has Chromium; its screenshot comes with the result and is served by link', async (t) => {
  if (!(await chromiumPresent(t, 'a relay running a browser check'))) return

  const capable = (await call('POST', `${base}/relays`, { name: 'Kiosk browser', regions: ['kiosk'], heartbeatSeconds: 1 })).json()
  startRelay(capable.key, { RELAY_CHROMIUM_PATH: CHROMIUM })
  await until('the capable relay to say it has Chromium', async () => (await call('GET', `${base}/relays/${capable.id}`)).json().browser)
  const created = await call('POST', `${base}/checks`, browserCheck)
  t.equal(created.statusCode, 201, created.body)
  const check = created.json()
  const run = await until('the relay’s result', async () => (await runsOf(check.id)).find((one) => one.state === 'done'), 30_000)
  t.match(run, { region: 'kiosk', relayId: capable.id, status: 'failing', error: /toHaveText/ }, 'run by the relay with Chromium')
  const [result] = (await call('GET', `${base}/checks/${check.id}/results`)).json().data
  const link = new URL(result.attempts[0].screenshotUrl)
  const image = await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
  t.equal(image.statusCode, 200)
  t.equal(image.rawPayload.subarray(1, 4).toString(), 'PNG', 'the relay’s screenshot, stored with its result and served by link')
  t.equal((run.attempts as Array<{ screenshot?: string }>)[0]!.screenshot, undefined, 'not in the stored attempt: apart, with the run')
})
