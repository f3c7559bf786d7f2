import { createServer as createHttpServer, type ServerResponse } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { MAINTENANCE_QUEUE } from '@svc/plugin-synthetics'
import { startTestService, until } from '@svc/testkit'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Checks run by the service itself, against loopback targets; their state opens and resolves
// alerts and moves status page components. Relays have their own test (synthetics-relay.test.ts).

const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    synthetics: { region: 'local', retentionDays: 30, concurrency: 10, secretsKey: randomBytes(32).toString('base64') },
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'synth', {
  manager: { synthetics: 'manager', alerting: 'manager', statuspages: 'manager' },
  viewer: { synthetics: 'viewer' },
})
const [owner, manager, viewer, stranger] = ['owner', 'manager', 'viewer', 'stranger'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/synthetics/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

// The target: an HTTP server whose answer the tests change.
let answer = { status: 200, body: '{"status":"ok"}' }
const seen: Array<{ authorization?: string }> = []
const hits = new Map<string, number>()
const targetHits = (path: string) => hits.get(path) ?? 0
const TOGETHER = 8
const waitingTogether: ServerResponse[] = []
const targetServer = createHttpServer((request, response) => {
  seen.push({ authorization: request.headers.authorization })
  hits.set(request.url ?? '', targetHits(request.url ?? '') + 1)
  // `/down-together` fails, and answers no one until eight are waiting: their runs end at once.
  if (request.url === '/down-together') {
    waitingTogether.push(response)
    if (waitingTogether.length === TOGETHER)
      for (const waiting of waitingTogether.splice(0)) waiting.writeHead(503, { 'content-type': 'application/json' }).end('{}')
    return
  }
  response.writeHead(answer.status, { 'content-type': 'application/json' })
  // `/slow` holds a runner's slot for a while.
  setTimeout(() => response.end(answer.body), request.url === '/slow' ? 400 : 0)
})
await new Promise<void>((resolve) => targetServer.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise((done) => targetServer.close(done)))
const target = `http://127.0.0.1:${(targetServer.address() as AddressInfo).port}`

/** Makes every running check due now (what time would do). */
const dueNow = () => sql`update divinux.synthetic_checks set next_due_at = now() where not paused`.execute(db)
const resultsOf = async (checkId: string) => (await call(viewer!, 'GET', `${base}/checks/${checkId}/results?limit=100`)).json()
const stateOf = async (checkId: string) => (await call(viewer!, 'GET', `${base}/checks/${checkId}`)).json().state as string

t.test('an HTTP check runs at once, then on its schedule; its results carry timings and assertions', async (t) => {
  const created = await call(manager!, 'POST', `${base}/checks`, {
    name: 'API health',
    kind: 'http',
    frequencySeconds: 60,
    request: { url: `${target}/health`, assertions: [{ source: 'jsonPath', property: '$.status', comparison: 'equals', target: 'ok' }] },
  })
  t.equal(created.statusCode, 201, created.body)
  const check = created.json()
  t.match(check, {
    kind: 'http',
    regions: ['local'],
    timeoutMs: 10_000,
    retries: 0,
    alertRule: { failures: 1, quorum: 'any', priority: 'P2' },
    state: 'unknown',
  })
  await until('result 1', async () => (await resultsOf(check.id)).meta.total === 1)
  const [first] = (await resultsOf(check.id)).data
  t.match(first, {
    region: 'local',
    status: 'passing',
    statusCode: 200,
    attempts: [{ status: 'passing', assertions: [{ passed: true, actual: 'ok' }] }],
  })
  t.ok(first.attempts[0].timings.total >= first.attempts[0].timings.firstByte)
  await until('the check to be passing', async () => (await stateOf(check.id)) === 'passing')
  const shown = (await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json()
  t.match(shown.regionStates, [{ region: 'local', status: 'passing' }])

  const [run] = await db.selectFrom('divinux.syntheticRuns').select(['dueAt']).where('checkId', '=', check.id).execute()
  const { nextDueAt } = await db
    .selectFrom('divinux.syntheticChecks')
    .select('nextDueAt')
    .where('id', '=', check.id)
    .executeTakeFirstOrThrow()
  t.equal(nextDueAt!.getTime() - run!.dueAt.getTime(), 60_000, 'the next run is due one period after the last')
  await dueNow()
  await until('result 2', async () => (await resultsOf(check.id)).meta.total === 2)

  const test = await call(manager!, 'POST', `${base}/checks/${check.id}/run`)
  t.match(test.json(), { status: 'passing', region: 'local', attempts: [{ statusCode: 200 }] })
  t.equal((await resultsOf(check.id)).meta.total, 2, 'a test run is not stored')

  const paused = await call(manager!, 'POST', `${base}/checks/${check.id}/pause`)
  t.match(paused.json(), { paused: true, nextDueAt: null })
  // Due as if a stray update had set its time, beside a check due at the same moment: once that
  // one has run, the runner has looked, so the paused one's missing run is not a matter of waiting.
  const witness = (
    await call(manager!, 'POST', `${base}/checks`, {
      name: 'Witness',
      kind: 'http',
      frequencySeconds: 60,
      request: { url: `${target}/health` },
    })
  ).json()
  await until('the witness’s first run', async () => (await resultsOf(witness.id)).meta.total === 1)
  await sql`update divinux.synthetic_checks set next_due_at = now() where id in (${check.id}, ${witness.id})`.execute(db)
  await until('the witness to run', async () => (await resultsOf(witness.id)).meta.total >= 2)
  t.equal((await resultsOf(check.id)).meta.total, 2, 'a paused check does not run')
  t.equal((await call(manager!, 'DELETE', `${base}/checks/${witness.id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/checks/${check.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/checks/${check.id}`)).statusCode, 404)
})

t.test('a failing check opens an alert that escalates with its policy; recovery resolves it and its component follows', async (t) => {
  const policy = (
    await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/escalation-policies`,
      headers: manager!.headers,
      payload: { name: 'Checks', steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] }] },
    })
  ).json()
  const pages = `/api/v1/statuspages/organizations/${orgId}`
  const page = (await call(manager!, 'POST', `${pages}/pages`, { name: 'Status', slug: 'synth-status', published: true })).json()
  const component = (await call(manager!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'API' })).json()
  const componentStatus = async () =>
    (await db.selectFrom('divinux.statusComponents').select('status').where('id', '=', component.id).executeTakeFirstOrThrow()).status

  answer = { status: 500, body: '{"status":"down"}' }
  const check = (
    await call(manager!, 'POST', `${base}/checks`, {
      name: 'Checkout',
      kind: 'http',
      frequencySeconds: 30,
      timeoutMs: 2000,
      request: { url: `${target}/checkout` },
      alertRule: { failures: 2, priority: 'P3', escalationPolicyId: policy.id },
      statusComponentIds: [component.id],
    })
  ).json()
  await until('result 1', async () => (await resultsOf(check.id)).meta.total === 1)
  await until('the check to be degraded', async () => (await stateOf(check.id)) === 'degraded')
  t.equal(
    await db.selectFrom('divinux.alerts').select('id').where('fingerprint', '=', `check:${check.id}`).executeTakeFirst(),
    undefined,
    'one failure of two is not an alert',
  )

  await dueNow()
  await until('the check to be failing', async () => (await stateOf(check.id)) === 'failing')
  const alert = await until('the alert to open', () =>
    db.selectFrom('divinux.alerts').selectAll().where('fingerprint', '=', `check:${check.id}`).executeTakeFirst(),
  )
  t.match(alert, {
    source: 'synthetics',
    status: 'open',
    priority: 'P3',
    service: 'Checkout',
    labels: { checkId: check.id, regions: 'local' },
    description: `${target}/checkout is failing in local (HTTP 500)`,
  })
  const escalation = await until('the escalation to start', () =>
    db
      .selectFrom('divinux.alertEscalations')
      .selectAll()
      .where('alertId', '=', alert.id)
      .where('state', 'not in', ['pending', 'unrouted'])
      .executeTakeFirst(),
  )
  t.equal(escalation.policyId, policy.id, 'it pages with the check’s escalation policy')
  const paged = await db.selectFrom('divinux.notificationAttempts').select(['userId']).where('alertId', '=', alert.id).execute()
  t.ok(
    paged.some((attempt) => attempt.userId === owner!.userId),
    'its first step paged the policy’s target',
  )
  await until('the component to be major_outage', async () => (await componentStatus()) === 'major_outage')

  await dueNow()
  await until('result 3', async () => (await resultsOf(check.id)).meta.total === 3)
  t.equal(
    (await db.selectFrom('divinux.alerts').select('occurrences').where('id', '=', alert.id).executeTakeFirstOrThrow()).occurrences,
    1,
    'still failing: no new event, no new alert',
  )

  answer = { status: 200, body: '{"status":"ok"}' }
  await dueNow()
  await until('the check to be passing', async () => (await stateOf(check.id)) === 'passing')
  await until(
    'the alert to be resolved',
    async () =>
      (await db.selectFrom('divinux.alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status === 'resolved',
  )
  await until('the component to be operational', async () => (await componentStatus()) === 'operational')

  // The range reaches past now: the next due time lies in the next minute.
  const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`
  // The four runs may straddle an hour (or a day): their buckets add up to them.
  type Bucket = { region: string | null; runs: number; failures: number; availability: number }
  const summed = (buckets: Bucket[]) => ({
    regions: [...new Set(buckets.map((bucket) => bucket.region))],
    runs: buckets.reduce((sum, bucket) => sum + bucket.runs, 0),
    failures: buckets.reduce((sum, bucket) => sum + bucket.failures, 0),
  })
  const stats = (await call(viewer!, 'GET', `${base}/checks/${check.id}/stats?interval=hour&${range}`)).json()
  t.match(stats, { source: 'results', interval: 'hour' })
  t.same(summed(stats.data), { regions: [null], runs: 4, failures: 3 })
  if (stats.data.length === 1) t.equal(stats.data[0].availability, 25)
  const byRegion = (await call(viewer!, 'GET', `${base}/checks/${check.id}/stats?interval=day&groupBy=region&${range}`)).json()
  t.same(summed(byRegion.data), { regions: ['local'], runs: 4, failures: 3 })
  const failing = (await call(viewer!, 'GET', `${base}/checks/${check.id}/results?status=failing&region=local`)).json()
  t.equal(failing.meta.total, 3)

  // A maintenance window over the failures leaves them out of the SLA: it ends between the third run and the fourth.
  const first = await db.selectFrom('divinux.syntheticRuns').select(['dueAt']).where('checkId', '=', check.id).orderBy('dueAt').execute()
  const windowEnd = new Date((first[2]!.dueAt.getTime() + first[3]!.dueAt.getTime()) / 2)
  const sla = (await call(viewer!, 'GET', `${base}/checks/${check.id}/sla?${range}`)).json()
  t.match(sla, { runs: 4, failures: 3, availability: 25, excludedWindows: [] })
  await db
    .insertInto('divinux.statusIncidents')
    .values({
      pageId: page.id,
      organizationId: orgId,
      kind: 'maintenance',
      name: 'Upgrade',
      status: 'completed',
      impact: 'maintenance',
      scheduledFor: new Date(first[0]!.dueAt.getTime() - 1000),
      scheduledUntil: windowEnd,
      startedAt: new Date(first[0]!.dueAt.getTime() - 1000),
      resolvedAt: windowEnd,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
    .then(({ id }) =>
      db
        .insertInto('divinux.statusIncidentComponents')
        .values({ incidentId: id, componentId: component.id, status: 'under_maintenance' })
        .execute(),
    )
  const excluded = (await call(viewer!, 'GET', `${base}/checks/${check.id}/sla?${range}`)).json()
  t.match(excluded, { runs: 1, failures: 0, availability: 100 })
  t.equal(excluded.excludedWindows.length, 1)

  // An analysis of the check's alert reads the check's results as part of its timeline.
  const requested = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${orgId}/insights`,
    headers: owner!.headers,
    payload: { incidentId: alert.id, sourceProduct: 'alerting' },
  })
  t.equal(requested.statusCode, 202, requested.body)
  const analysisId = requested.json().id as string
  await until('the analysis', async () => {
    const body = (
      await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/insights/${analysisId}`, headers: owner!.headers })
    ).json()
    return body.status === 'completed' || body.status === 'failed' ? body : undefined
  })
  const evidence = await db.selectFrom('divinux.analyses').select(['evidence']).where('id', '=', analysisId).executeTakeFirstOrThrow()
  t.match(evidence.evidence, { checks: [{ region: 'local', errors: ['HTTP 500'] }] }, 'the check results per region are evidence')
})

t.test('a check of a service fails as that service’s alert, paging the service’s policy', async (t) => {
  const alerting = `/api/v1/organizations/${orgId}`
  const policy = (
    await call(manager!, 'POST', `${alerting}/escalation-policies`, {
      name: 'Orders on-call',
      steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: owner!.userId }] }],
    })
  ).json()
  const registered = await call(manager!, 'POST', `${alerting}/services`, {
    key: 'orders',
    aliases: ['orders-api'],
    escalationPolicyId: policy.id,
  })
  t.equal(registered.statusCode, 201, registered.body)
  answer = { status: 503, body: '{"status":"down"}' }
  const created = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Orders API',
    kind: 'http',
    frequencySeconds: 60,
    request: { url: `${target}/orders` },
    service: 'orders-api',
  })
  t.equal(created.statusCode, 201, created.body)
  t.equal(created.json().service, 'orders-api')
  const check = created.json()
  const alert = await until('the alert to open', () =>
    db.selectFrom('divinux.alerts').selectAll().where('fingerprint', '=', `check:${check.id}`).executeTakeFirst(),
  )
  t.match(alert, { source: 'synthetics', service: 'orders-api', title: 'Check failing: Orders API' })
  const escalation = await until('the escalation to start', () =>
    db
      .selectFrom('divinux.alertEscalations')
      .selectAll()
      .where('alertId', '=', alert.id)
      .where('state', '<>', 'pending')
      .executeTakeFirst(),
  )
  t.match(escalation, { policyId: policy.id, state: 'active' }, 'the alert rule names no policy: the service’s pages')
  answer = { status: 200, body: '{"status":"ok"}' }

  const pages = `/api/v1/statuspages/organizations/${orgId}`
  const page = (await call(manager!, 'POST', `${pages}/pages`, { name: 'Orders', slug: 'synth-orders' })).json()
  const component = (
    await call(manager!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Ordering', alertServices: ['Orders'] })
  ).json()
  const shown = (await call(manager!, 'GET', `${alerting}/services/${registered.json().id}`)).json()
  t.same(shown.checks, [{ id: check.id, name: 'Orders API' }], 'the service shows the checks that belong to it')
  t.same(
    shown.statusComponents,
    [{ id: component.id, name: 'Ordering', pageId: page.id, pageSlug: 'synth-orders' }],
    'and the components following it',
  )
  t.same((await call(manager!, 'PATCH', `${base}/checks/${check.id}`, { service: null, paused: true })).json().service, null)
  t.same((await call(manager!, 'GET', `${alerting}/services/${registered.json().id}`)).json().checks, [])
})

t.test('secrets are sealed, never returned, and filled into requests where the check runs', async (t) => {
  const put = await call(manager!, 'PUT', `${base}/secrets/API_TOKEN`, { value: 's3cr3t-value' })
  t.equal(put.statusCode, 201)
  t.equal((await call(manager!, 'PUT', `${base}/secrets/API_TOKEN`, { value: 's3cr3t-value-2' })).statusCode, 200, 'replaced')
  const listed = await call(manager!, 'GET', `${base}/secrets`)
  t.match(listed.json(), { data: [{ name: 'API_TOKEN' }] })
  t.notMatch(listed.body, /s3cr3t/)
  const stored = await db.selectFrom('divinux.syntheticSecrets').select('sealed').executeTakeFirstOrThrow()
  t.notOk(stored.sealed.toString('latin1').includes('s3cr3t'), 'sealed at rest')
  t.equal((await call(viewer!, 'GET', `${base}/secrets`)).statusCode, 403, 'names are for managers')

  const unknown = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Private API',
    kind: 'http',
    frequencySeconds: 60,
    request: { url: target, headers: { authorization: 'Bearer {{secret:NOPE}}' } },
  })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /secret NOPE/)
  const check = (
    await call(manager!, 'POST', `${base}/checks`, {
      name: 'Private API',
      kind: 'http',
      frequencySeconds: 60,
      paused: true,
      request: { url: target, headers: { authorization: 'Bearer {{secret:API_TOKEN}}' } },
    })
  ).json()
  t.equal(check.request.headers.authorization, 'Bearer {{secret:API_TOKEN}}', 'the check shows the reference, not the value')
  seen.length = 0
  const ran = (await call(manager!, 'POST', `${base}/checks/${check.id}/run`)).json()
  t.equal(ran.status, 'passing', JSON.stringify(ran))
  t.same(seen, [{ authorization: 'Bearer s3cr3t-value-2' }])
  t.equal((await call(manager!, 'DELETE', `${base}/secrets/API_TOKEN`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/secrets/API_TOKEN`)).statusCode, 404)
  const broken = (await call(manager!, 'POST', `${base}/checks/${check.id}/run`)).json()
  t.match(broken, { status: 'failing', attempts: [{ error: 'the secret API_TOKEN does not exist' }] })
})

t.test('a heartbeat check fails when its pings stop and recovers on the next ping', async (t) => {
  const created = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Nightly backup',
    kind: 'heartbeat',
    frequencySeconds: 3600,
    request: { graceSeconds: 300 },
  })
  t.equal(created.statusCode, 201, created.body)
  const check = created.json()
  t.match(check.heartbeatUrl, /\/api\/v1\/synthetics\/heartbeats\/hb_/)
  t.same(check.regions, ['local'])
  const path = new URL(check.heartbeatUrl).pathname
  t.equal((await app.inject({ method: 'GET', url: path })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: path })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/synthetics/heartbeats/hb_not-a-real-token' })).statusCode, 404)
  t.ok((await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json().lastPingAt)
  t.equal((await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json().heartbeatUrl, undefined, 'the URL is shown once')

  // The last ping was a day ago, and the check's due time is now: it fails.
  const now = new Date().toISOString()
  await sql`update divinux.synthetic_checks set last_ping_at = now() - interval '1 day', next_due_at = ${now} where id = ${check.id}`.execute(
    db,
  )
  await until('the check to be failing', async () => (await stateOf(check.id)) === 'failing')
  t.match((await resultsOf(check.id)).data[0], { status: 'failing', error: /no ping since/ })
  await until('the alert to open', () =>
    db
      .selectFrom('divinux.alerts')
      .select('id')
      .where('fingerprint', '=', `check:${check.id}`)
      .where('status', '=', 'open')
      .executeTakeFirst(),
  )
  t.equal((await app.inject({ method: 'GET', url: path })).statusCode, 200)
  t.equal(await stateOf(check.id), 'passing', 'a ping recovers it at once')
  await until('the alert to be resolved', () =>
    db
      .selectFrom('divinux.alerts')
      .select('id')
      .where('fingerprint', '=', `check:${check.id}`)
      .where('status', '=', 'resolved')
      .executeTakeFirst(),
  )
})

t.test('a heartbeat’s push URL can be replaced: the new one works, the old one is 404, history stays', async (t) => {
  const created = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Hourly export',
    kind: 'heartbeat',
    frequencySeconds: 3600,
    request: {},
  })
  t.equal(created.statusCode, 201, created.body)
  const check = created.json()
  const before = new URL(check.heartbeatUrl).pathname
  t.equal((await app.inject({ method: 'POST', url: before })).statusCode, 200)
  const lastPingAt = (await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json().lastPingAt
  t.ok(lastPingAt)

  t.equal((await call(viewer!, 'POST', `${base}/checks/${check.id}/heartbeat-url`)).statusCode, 403, 'viewers cannot')
  t.equal(
    (await call(stranger!, 'POST', `/api/v1/synthetics/organizations/${otherOrgId}/checks/${check.id}/heartbeat-url`)).statusCode,
    404,
    'another organization cannot',
  )
  const replaced = await call(manager!, 'POST', `${base}/checks/${check.id}/heartbeat-url`)
  t.equal(replaced.statusCode, 200)
  t.match(replaced.json(), { id: check.id, name: 'Hourly export', lastPingAt, heartbeatUrl: /\/api\/v1\/synthetics\/heartbeats\/hb_/ })
  const after = new URL(replaced.json().heartbeatUrl).pathname
  t.not(after, before)
  t.equal((await app.inject({ method: 'POST', url: before })).statusCode, 404, 'the old URL stops working')
  t.equal((await app.inject({ method: 'POST', url: after })).statusCode, 200)
  t.equal((await call(viewer!, 'GET', `${base}/checks/${check.id}`)).json().heartbeatUrl, undefined, 'the new URL is shown once too')
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityId', '=', check.id)
    .where('action', '=', 'check.heartbeat_url_replaced')
    .execute()
  t.equal(audit.length, 1, 'the replacement is audited')

  const http = (
    await call(manager!, 'POST', `${base}/checks`, {
      name: 'Not a heartbeat',
      kind: 'tcp',
      frequencySeconds: 60,
      request: { host: '127.0.0.1', port: 1 },
      paused: true,
    })
  ).json()
  const refused = await call(manager!, 'POST', `${base}/checks/${http.id}/heartbeat-url`)
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /^kind: /)
  t.equal((await call(manager!, 'DELETE', `${base}/checks/${check.id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/checks/${http.id}`)).statusCode, 204)
})

t.test('TCP, DNS and TLS checks are accepted with their own fields; bad input names the field and changes nothing', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer((socket) => socket.end())
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
    t.teardown(() => new Promise((done) => server.close(done)))
  })
  const tcp = await call(manager!, 'POST', `${base}/checks`, {
    name: 'DB port',
    kind: 'tcp',
    frequencySeconds: 60,
    paused: true,
    request: { host: '127.0.0.1', port },
  })
  t.equal(tcp.statusCode, 201, tcp.body)
  t.equal((await call(manager!, 'POST', `${base}/checks/${tcp.json().id}/run`)).json().status, 'passing')
  const dns = await call(manager!, 'POST', `${base}/checks`, {
    name: 'DNS',
    kind: 'dns',
    frequencySeconds: 300,
    paused: true,
    request: { name: 'example.test', recordType: 'A', expectedValues: ['192.0.2.1'] },
  })
  t.equal(dns.statusCode, 201, dns.body)
  const tls = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Cert',
    kind: 'tls',
    frequencySeconds: 3600,
    paused: true,
    request: { host: 'localhost', daysBeforeExpiry: 30 },
  })
  t.equal(tls.statusCode, 201, tls.body)

  const before = await db
    .selectFrom('divinux.syntheticChecks')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow()
  const refused = async (payload: object, status: number, message: RegExp) => {
    const response = await call(manager!, 'POST', `${base}/checks`, { name: 'Bad', frequencySeconds: 60, paused: true, ...payload })
    t.equal(response.statusCode, status, `${JSON.stringify(payload)}: ${response.body}`)
    t.match(response.json().message, message)
  }
  await refused({ kind: 'http', request: { url: 'not a url' } }, 400, /request\/url/)
  await refused({ kind: 'http', request: { url: 'ftp://example.com/file' } }, 400, /request\/url.*http or https/)
  await refused({ kind: 'dns', request: { name: 'example.com', recordType: 'PTR' } }, 400, /request/)
  await refused({ kind: 'http', frequencySeconds: 10, request: { url: target } }, 400, /frequencySeconds/)
  await refused({ kind: 'http', frequencySeconds: 100_000, request: { url: target } }, 400, /frequencySeconds/)
  await refused(
    {
      kind: 'tcp',
      request: { host: '127.0.0.1', port, assertions: [{ source: 'header', property: 'x', comparison: 'equals', target: '1' }] },
    },
    400,
    /request\/assertions\/0\/source a tcp check cannot assert on header/,
  )
  await refused(
    { kind: 'http', request: { url: target, assertions: [{ source: 'jsonPath', comparison: 'equals', target: '1' }] } },
    400,
    /request\/assertions\/0\/property/,
  )
  await refused({ kind: 'http', request: { url: target }, regions: ['mars-1'] }, 400, /regions\/0 no runner serves mars-1/)
  await refused({ kind: 'http', request: { url: target }, timeoutMs: 5000, degradedMs: 6000 }, 400, /degradedMs/)
  await refused({ kind: 'tcp', request: { url: target } }, 400, /request/)
  await refused(
    { kind: 'http', request: { url: target }, alertRule: { escalationPolicyId: '00000000-0000-4000-8000-000000000000' } },
    400,
    /alertRule\/escalationPolicyId/,
  )
  await refused(
    { kind: 'http', request: { url: target }, statusComponentIds: ['00000000-0000-4000-8000-000000000000'] },
    400,
    /statusComponentIds\/0/,
  )
  const after = await db
    .selectFrom('divinux.syntheticChecks')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow()
  t.equal(after.n, before.n, 'nothing was created')

  const id = tcp.json().id
  t.equal(
    (await call(stranger!, 'GET', `/api/v1/synthetics/organizations/${otherOrgId}/checks/${id}`)).statusCode,
    404,
    'another organization’s check',
  )
  t.equal((await call(stranger!, 'GET', `${base}/checks/${id}`)).statusCode, 404, 'an organization one is not in')
  t.equal((await call(viewer!, 'POST', `${base}/checks/${id}/run`)).statusCode, 403, 'viewers read only')
  t.equal((await call(manager!, 'PATCH', `${base}/checks/${id}`, { request: { host: '127.0.0.1', port: 0 } })).statusCode, 400)
  const renamed = await call(manager!, 'PATCH', `${base}/checks/${id}`, { name: 'Database port', retries: 2, alertRule: { quorum: 'all' } })
  t.match(renamed.json(), { name: 'Database port', retries: 2, alertRule: { quorum: 'all', failures: 1 }, request: { port } })
})

t.test('the platform lists the organization’s checks through the synthetics surface', async (t) => {
  const platform = await buildPlatform(service.config, service.resources)
  t.teardown(() => platform.close())
  const listed = await platform.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/checks?limit=100`, headers: viewer!.headers })
  t.equal(listed.statusCode, 200, listed.body)
  t.ok(listed.json().meta.total >= 4)
  t.match(
    listed.json().data.find((check: { name: string }) => check.name === 'Nightly backup'),
    { kind: 'heartbeat', state: 'passing' },
  )
  t.equal(
    (await platform.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/checks`, headers: stranger!.headers })).statusCode,
    404,
  )
})

t.test('a run leased by a runner that stopped beating (its replica died) is recorded missed within seconds, never run twice', async (t) => {
  const created = await call(manager!, 'POST', `${base}/checks`, {
    name: 'Orphaned',
    kind: 'http',
    frequencySeconds: 3600,
    request: { url: `${target}/orphaned` },
  })
  t.equal(created.statusCode, 201)
  const check = created.json()
  await until('the first run', async () => (await resultsOf(check.id)).meta.total === 1)
  // A replica that died while it ran this check: its runner's last beat is a minute old.
  const deadRunner = '00000000-0000-4000-8000-00000000dead'
  await db
    .insertInto('divinux.syntheticRunners')
    .values({ id: deadRunner, region: 'local', heartbeatAt: new Date(Date.now() - 60_000) })
    .execute()
  /** A run of this check leased by the dead runner: due and started so many ms ago, its lease ending `leaseLeft` ms from now. */
  const leasedRun = (dueAgo: number, startedAgo: number, leaseLeft: number) =>
    db
      .insertInto('divinux.syntheticRuns')
      .values({
        checkId: check.id,
        organizationId: orgId,
        region: 'local',
        dueAt: new Date(Date.now() - dueAgo),
        state: 'leased',
        runnerId: deadRunner,
        startedAt: new Date(Date.now() - startedAgo),
        leasedUntil: new Date(Date.now() + leaseLeft),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  const orphan = await leasedRun(5_000, 5_000, 235_000)
  const missed = await until(
    'the orphaned run to be recorded missed',
    async () => {
      const row = await db
        .selectFrom('divinux.syntheticRuns')
        .select(['state', 'status', 'error'])
        .where('id', '=', orphan.id)
        .executeTakeFirstOrThrow()
      return row.state === 'missed' ? row : undefined
    },
    30_000,
  )
  // Its replica may have reached the target before it died: a due time runs at most once.
  t.match(missed, { state: 'missed', status: null, error: /runner stopped while running it/ })
  t.equal(targetHits('/orphaned'), 1, 'the target was called for the first run only')
  t.equal((await resultsOf(check.id)).meta.total, 1, 'no result is made up for the missed run')

  // A run whose lease ran out on a runner that still beats is not leased again either.
  // The runner beats again first, so that only its lease, not its silence, is what ran out.
  await sql`update divinux.synthetic_runners set heartbeat_at = now() where id = ${deadRunner}`.execute(db)
  const expired = await leasedRun(1_000, 241_000, -1_000)
  await app.jobs.send(MAINTENANCE_QUEUE, {})
  const lapsed = await until('the lapsed run to be recorded missed', async () => {
    const row = await db
      .selectFrom('divinux.syntheticRuns')
      .select(['state', 'error'])
      .where('id', '=', expired.id)
      .executeTakeFirstOrThrow()
    return row.state === 'missed' ? row : undefined
  })
  t.match(lapsed.error, /lease ran out/)
  t.equal(targetHits('/orphaned'), 1, 'and the target was not called for it')
})

t.test(
  'a busy runner takes checks a little before they fall due and starts each on time; a heartbeat is judged only once due',
  async (t) => {
    const { http, heartbeat } = await db
      .insertInto('divinux.syntheticChecks')
      .values(
        (['http', 'heartbeat'] as const).map((kind) => ({
          organizationId: orgId,
          name: `Ahead ${kind}`,
          kind,
          request: sql`${JSON.stringify(kind === 'http' ? { url: `${target}/ahead` } : { graceSeconds: 60 })}::jsonb`,
          frequencySeconds: 3600,
          timeoutMs: 5000,
          regions: sql`array['local']::text[]`,
          // Both fall due two seconds from now: the runner looks for the HTTP check 1.25 s before.
          nextDueAt: sql<Date>`now() + interval '2 seconds'`,
        })) as never,
      )
      .returning(['id', 'kind'])
      .execute()
      .then((rows) => Object.fromEntries(rows.map((row) => [row.kind, row.id])) as Record<'http' | 'heartbeat', string>)
    const runOf = (checkId: string) =>
      until(`the run of ${checkId}`, () =>
        db
          .selectFrom('divinux.syntheticRuns')
          .select(['state', 'dueAt', 'createdAt', 'startedAt', 'attempts'])
          .where('checkId', '=', checkId)
          .where('state', '=', 'done')
          .executeTakeFirst(),
      )
    const [ahead, judged] = await Promise.all([runOf(http), runOf(heartbeat)])
    t.ok(ahead.createdAt < ahead.dueAt, 'the HTTP run was taken before its due time')
    const attemptStarted = new Date((ahead.attempts as Array<{ startedAt: string }>)[0]!.startedAt)
    t.ok(attemptStarted >= ahead.dueAt, `its request went out at its due time, not before (${attemptStarted.toISOString()})`)
    t.ok(ahead.startedAt! >= ahead.dueAt && ahead.startedAt! <= attemptStarted, 'and it is recorded as started then')
    t.ok(judged.createdAt >= judged.dueAt, 'the heartbeat was judged once due, when a ping could no longer count')
    await db.deleteFrom('divinux.syntheticChecks').where('id', 'in', [http, heartbeat]).execute()
  },
)

/** Inserts `count` HTTP checks of `url`, due now, hourly afterwards; answers their ids. */
async function checksDueNow(count: number, name: string, url: string, rule: { alertAfterFailures?: number; retries?: number } = {}) {
  const checks = await db
    .insertInto('divinux.syntheticChecks')
    .values(
      Array.from({ length: count }, (_, index) => ({
        organizationId: orgId,
        name: `${name} ${index}`,
        kind: 'http',
        request: sql`${JSON.stringify({ url })}::jsonb`,
        frequencySeconds: 3600,
        timeoutMs: 5000,
        regions: sql`array['local']::text[]`,
        ...rule,
        nextDueAt: sql<Date>`now()`,
      })) as never,
    )
    .returning('id')
    .execute()
  return checks.map((check) => check.id)
}

/** The runs of these checks, one each, once every one is done; in the order they started. */
const runsOnceDone = (ids: string[]) =>
  until('every run to be done', async () => {
    const rows = await db
      .selectFrom('divinux.syntheticRuns')
      .select(['checkId', 'state', 'status', 'startedAt', 'finishedAt'])
      .where('checkId', 'in', ids)
      .orderBy('startedAt')
      .execute()
    return rows.length === ids.length && rows.every((row) => row.state === 'done') ? rows : undefined
  })

t.test('more runs due than free slots: the rest wait queued and run as slots free up, each once', async (t) => {
  // Twelve checks due at once, on a runner of ten slots, against a target that answers slowly.
  const ids = await checksDueNow(12, 'Slow', `${target}/slow`)
  const runs = await runsOnceDone(ids)
  t.equal(new Set(runs.map((run) => run.checkId)).size, 12, 'one run per check')
  t.ok(
    runs.every((run) => run.status === 'passing'),
    'each passed',
  )
  const firstFinished = Math.min(...runs.map((run) => run.finishedAt!.getTime()))
  t.ok(runs[10]!.startedAt!.getTime() >= firstFinished, 'the runs past the tenth started once a slot was free')
  await db.deleteFrom('divinux.syntheticChecks').where('id', 'in', ids).execute()
})

t.test('runs that end together are recorded together, each check judged on its own: eight fail and open eight alerts', async (t) => {
  // Eight checks due at once against a target that fails them all at one moment: a run that ends
  // while others are under way waits for them (at most a second), and the last one to end records
  // them all in one transaction.
  const ids = await checksDueNow(TOGETHER, 'Down', `${target}/down-together`, { alertAfterFailures: 1, retries: 0 })
  const runs = await runsOnceDone(ids)
  t.ok(
    runs.every((run) => run.status === 'failing'),
    'each run failed',
  )
  // A row's xmin is the transaction that last wrote it: the one that recorded the run.
  const { transactions } = await sql<{ transactions: number }>`
    select count(distinct xmin::text)::int as transactions from divinux.synthetic_runs where check_id in (${sql.join(ids)})`
    .execute(db)
    .then((result) => result.rows[0]!)
  t.ok(transactions < TOGETHER, `${TOGETHER} runs recorded in ${transactions} transactions`)
  const states = await db.selectFrom('divinux.syntheticChecks').select(['id', 'state']).where('id', 'in', ids).execute()
  t.same(
    states.map((check) => check.state),
    ids.map(() => 'failing'),
    'every check is failing',
  )
  const alerts = await until('an alert for each check', async () => {
    const rows = await db
      .selectFrom('divinux.alerts')
      .select('fingerprint')
      .where('organizationId', '=', orgId)
      .where(
        'fingerprint',
        'in',
        ids.map((id) => `check:${id}`),
      )
      .execute()
    return rows.length === TOGETHER ? rows : undefined
  })
  t.equal(new Set(alerts.map((alert) => alert.fingerprint)).size, TOGETHER, 'one alert per check')
  await db.deleteFrom('divinux.syntheticChecks').where('id', 'in', ids).execute()
})
