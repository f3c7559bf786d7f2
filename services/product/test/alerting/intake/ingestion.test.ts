import { createHmac } from 'node:crypto'
import t from 'tap'
import { sql } from 'kysely'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const { orgId, otherOrgId, person } = await alertingOrganization(service, 'ingest', { responder: 'responder', viewer: 'viewer' })
const [owner, responder, viewer, stranger] = ['owner', 'responder', 'viewer', 'stranger'].map(person)

async function createConfig(payload: Record<string, unknown>, organization = orgId, who = owner!) {
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/organizations/${organization}/webhooks`,
    headers: who.headers,
    payload,
  })
  if (response.statusCode !== 201) throw new Error(`config not created: ${response.body}`)
  return response.json() as { id: string; apiKey: string; ingestPath: string; signingSecret?: string }
}

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
const signAt = (secret: string, body: string, at: number) =>
  `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`
const ingest = (path: string, body: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', ...headers }, payload: body })
const alertsUrl = `/api/v1/organizations/${orgId}/alerts`
const counts = async () => {
  const count = async (table: 'divinux.alerts' | 'divinux.alertEvents' | 'divinux.webhookDeliveries') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return {
    alerts: await count('divinux.alerts'),
    events: await count('divinux.alertEvents'),
    deliveries: await count('divinux.webhookDeliveries'),
  }
}

function alertmanager(status: 'firing' | 'resolved') {
  return JSON.stringify({
    version: '4',
    groupKey: '{}:{alertname="HighErrorRate"}',
    status,
    receiver: 'incident-platform',
    commonLabels: { alertname: 'HighErrorRate', service: 'checkout' },
    commonAnnotations: {},
    alerts: [
      {
        status,
        labels: { alertname: 'HighErrorRate', severity: 'critical', instance: 'a' },
        annotations: { summary: 'Checkout errors above 5%' },
        startsAt: '2026-11-23T08:00:00Z',
        fingerprint: 'fp-checkout-a',
      },
      {
        status,
        labels: { alertname: 'HighErrorRate', severity: 'warning', instance: 'b' },
        annotations: { description: 'b is degraded' },
        startsAt: '2026-11-23T08:00:00Z',
        fingerprint: 'fp-checkout-b',
      },
    ],
  })
}

const prometheus = await createConfig({ name: 'Prometheus', format: 'alertmanager', signed: true })
const secret = prometheus.signingSecret ?? ''

t.test('a signed Alertmanager delivery becomes alerts; again, it deduplicates; resolved, it resolves', async (t) => {
  const firing = alertmanager('firing')
  const created = await ingest(prometheus.ingestPath, firing, { 'x-webhook-signature': sign(secret, firing) })
  t.equal(created.statusCode, 202)
  t.match(created.json(), { status: 'created', results: [{ status: 'created' }, { status: 'created' }] })
  const [first, second] = created.json().results as Array<{ alertId: string }>
  const alert = (await app.inject({ method: 'GET', url: `${alertsUrl}/${first!.alertId}`, headers: viewer!.headers })).json()
  t.match(alert, {
    title: 'Checkout errors above 5%',
    priority: 'P1',
    status: 'open',
    service: 'checkout',
    source: 'alertmanager',
    fingerprint: 'fp-checkout-a',
    occurrences: 1,
    groupId: null,
    labels: { instance: 'a', severity: 'critical' },
  })
  const sibling = (await app.inject({ method: 'GET', url: `${alertsUrl}/${second!.alertId}`, headers: viewer!.headers })).json()
  t.match(
    sibling,
    { title: 'HighErrorRate', description: 'b is degraded', priority: 'P3', groupId: first!.alertId },
    'one group key within the window: one group',
  )

  const again = await ingest(prometheus.ingestPath, firing, { 'x-webhook-signature': sign(secret, firing) })
  t.match(again.json(), { alertId: first!.alertId, status: 'deduplicated' })
  const updated = (await app.inject({ method: 'GET', url: `${alertsUrl}/${first!.alertId}`, headers: viewer!.headers })).json()
  t.equal(updated.occurrences, 2)
  t.ok(updated.lastSeenAt >= alert.lastSeenAt)

  const resolved = alertmanager('resolved')
  const closing = await ingest(prometheus.ingestPath, resolved, { 'x-webhook-signature': sign(secret, resolved) })
  t.match(closing.json(), { alertId: first!.alertId, status: 'resolved', results: [{ status: 'resolved' }, { status: 'resolved' }] })
  t.equal(
    (await ingest(prometheus.ingestPath, resolved, { 'x-webhook-signature': sign(secret, resolved) })).json().status,
    'ignored',
    'nothing left to resolve',
  )

  const events = (await app.inject({ method: 'GET', url: `${alertsUrl}/${first!.alertId}/events`, headers: viewer!.headers })).json().data
  t.same(
    events.map((event: { type: string }) => event.type),
    ['created', 'occurred', 'resolved'],
  )

  const refiring = await ingest(prometheus.ingestPath, firing, { 'x-webhook-signature': sign(secret, firing) })
  t.equal(refiring.json().status, 'created', 'firing after a resolve is a new alert')
  t.not(refiring.json().alertId, first!.alertId)
})

t.test('every refused delivery leaves the database unchanged', async (t) => {
  const disabled = await createConfig({ name: 'Disabled', enabled: false })
  const rotated = await createConfig({ name: 'Rotated' })
  await app.inject({ method: 'POST', url: `/api/v1/organizations/${orgId}/webhooks/${rotated.id}/regenerate-key`, headers: owner!.headers })
  const generic = await createConfig({ name: 'Generic', signingSecret: 'generic-secret-0123' })
  const body = JSON.stringify({ title: 'Disk full', priority: 'high' })
  const now = Math.floor(Date.now() / 1000)
  const before = await counts()
  const cases: Array<[string, string, string, Record<string, string>, number]> = [
    ['unknown key', '/api/v1/webhooks/ingest/whk_nothing', body, {}, 404],
    ['disabled config', disabled.ingestPath, body, {}, 404],
    ['rotated key', rotated.ingestPath, body, {}, 404],
    ['missing signature', generic.ingestPath, body, {}, 401],
    ['wrong signature', generic.ingestPath, body, { 'x-webhook-signature': sign('another-secret-0123', body) }, 401],
    ['signature of another body', generic.ingestPath, body, { 'x-webhook-signature': sign('generic-secret-0123', `${body} `) }, 401],
    ['malformed signature', generic.ingestPath, body, { 'x-webhook-signature': 'sha256=zz' }, 401],
    ['garbage signature', generic.ingestPath, body, { 'x-webhook-signature': 'v1=abc,t=' }, 401],
    ['stale timestamp', generic.ingestPath, body, { 'x-webhook-signature': signAt('generic-secret-0123', body, now - 400) }, 401],
    ['future timestamp', generic.ingestPath, body, { 'x-webhook-signature': signAt('generic-secret-0123', body, now + 400) }, 401],
    ['not JSON', generic.ingestPath, '{"title": ', { 'x-webhook-signature': sign('generic-secret-0123', '{"title": ') }, 400],
    [
      'no title',
      generic.ingestPath,
      '{"severity": "high"}',
      { 'x-webhook-signature': sign('generic-secret-0123', '{"severity": "high"}') },
      400,
    ],
    ['not an object', generic.ingestPath, '[1, 2]', { 'x-webhook-signature': sign('generic-secret-0123', '[1, 2]') }, 400],
  ]
  for (const [what, path, payload, headers, status] of cases) {
    const response = await ingest(path, payload, headers)
    t.equal(response.statusCode, status, what)
    t.notMatch(response.body, /whk_/, `${what}: the key is not echoed`)
  }
  const huge = JSON.stringify({ title: 'big', description: 'x'.repeat(1024 * 1024) })
  t.equal((await ingest(generic.ingestPath, huge, { 'x-webhook-signature': sign('generic-secret-0123', huge) })).statusCode, 413)
  t.same(await counts(), before)

  const fresh = signAt('generic-secret-0123', body, now - 10)
  t.equal(
    (await ingest(generic.ingestPath, body, { 'x-webhook-signature': fresh })).statusCode,
    202,
    'a timestamped signature within 300 s',
  )
})

t.test('a key that has just been used is refused at once after it is rotated, the config disabled or the secret changed', async (t) => {
  const config = await createConfig({ name: 'Hot', signed: true })
  const body = JSON.stringify({ title: 'Hot path' })
  const configUrl = `/api/v1/organizations/${orgId}/webhooks/${config.id}`
  t.equal(
    (await ingest(config.ingestPath, body, { 'x-webhook-signature': sign(config.signingSecret ?? '', body) })).statusCode,
    202,
    'used, so the service now holds the config',
  )

  const rotated = (
    await app.inject({ method: 'POST', url: `${configUrl}/regenerate-key?rotateSigningSecret=true`, headers: owner!.headers })
  ).json()
  const before = await counts()
  t.equal(
    (await ingest(config.ingestPath, body, { 'x-webhook-signature': sign(config.signingSecret ?? '', body) })).statusCode,
    404,
    'the old key',
  )
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign(config.signingSecret ?? '', body) })).statusCode,
    401,
    'the new key with the old secret',
  )
  t.same(await counts(), before)
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign(rotated.signingSecret, body) })).statusCode,
    202,
    'the new key and secret',
  )

  await app.inject({ method: 'PATCH', url: configUrl, headers: owner!.headers, payload: { signingSecret: 'a-third-secret-value' } })
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign(rotated.signingSecret, body) })).statusCode,
    401,
    'a secret changed by PATCH',
  )
  t.equal((await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign('a-third-secret-value', body) })).statusCode, 202)

  await app.inject({ method: 'PATCH', url: configUrl, headers: owner!.headers, payload: { enabled: false } })
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign('a-third-secret-value', body) })).statusCode,
    404,
    'disabled',
  )
  await app.inject({ method: 'PATCH', url: configUrl, headers: owner!.headers, payload: { enabled: true } })
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign('a-third-secret-value', body) })).statusCode,
    202,
    'enabled again',
  )
  await app.inject({ method: 'DELETE', url: configUrl, headers: owner!.headers })
  t.equal(
    (await ingest(rotated.ingestPath, body, { 'x-webhook-signature': sign('a-third-secret-value', body) })).statusCode,
    404,
    'deleted',
  )
})

t.test('without a secret the signature is optional, and a malformed one is still refused', async (t) => {
  const open = await createConfig({ name: 'Open' })
  const body = JSON.stringify({ title: 'Queue backlog', service: 'billing', status: 'firing', labels: { queue: 'invoices' } })
  t.equal((await ingest(open.ingestPath, body)).statusCode, 202)
  t.equal((await ingest(open.ingestPath, body, { 'x-webhook-signature': 'nonsense' })).statusCode, 401)
})

t.test('retried deliveries are processed once', async (t) => {
  const generic = await createConfig({ name: 'Retries' })
  const body = JSON.stringify({ title: 'Payment latency', fingerprint: 'latency-1' })
  const first = await ingest(generic.ingestPath, body, { 'x-delivery-id': 'd-1' })
  const retry = await ingest(generic.ingestPath, body, { 'x-delivery-id': 'd-1' })
  t.same(retry.json(), first.json(), 'the same answer')
  const alert = await db
    .selectFrom('divinux.alerts')
    .select(['occurrences'])
    .where('id', '=', first.json().alertId)
    .executeTakeFirstOrThrow()
  t.equal(alert.occurrences, 1)
  t.equal(
    (await ingest(generic.ingestPath, body, { 'webhook-id': 'msg-2' })).json().status,
    'deduplicated',
    'another delivery is another occurrence',
  )

  const timed = JSON.stringify({ title: 'Cron missed', fingerprint: 'cron-1', timestamp: '2026-11-23T09:00:00Z' })
  const once = await ingest(generic.ingestPath, timed)
  t.same((await ingest(generic.ingestPath, timed)).json(), once.json(), 'same fingerprint and timestamp: a retry')
})

t.test('PagerDuty Events v2: trigger, acknowledge, resolve by dedup_key', async (t) => {
  const pagerduty = await createConfig({ name: 'PagerDuty', format: 'pagerduty' })
  const event = (action: string) =>
    JSON.stringify({
      routing_key: 'r',
      event_action: action,
      dedup_key: 'srv-42',
      payload: {
        summary: 'DB replica lag',
        source: 'db-2',
        severity: 'error',
        component: 'postgres',
        group: 'db',
        custom_details: { lag: 42 },
      },
    })
  const triggered = (await ingest(pagerduty.ingestPath, event('trigger'))).json()
  t.equal(triggered.status, 'created')
  t.match(await db.selectFrom('divinux.alerts').selectAll().where('id', '=', triggered.alertId).executeTakeFirstOrThrow(), {
    priority: 'P2',
    service: 'postgres',
    fingerprint: 'srv-42',
    groupKey: 'db',
    labels: { lag: '42', source: 'db-2' },
  })
  t.match((await ingest(pagerduty.ingestPath, event('acknowledge'))).json(), { alertId: triggered.alertId, status: 'acknowledged' })
  t.match((await ingest(pagerduty.ingestPath, event('resolve'))).json(), { alertId: triggered.alertId, status: 'resolved' })
  t.equal((await ingest(pagerduty.ingestPath, JSON.stringify({ event_action: 'resolve' }))).statusCode, 400, 'a resolve needs dedup_key')
  t.equal((await ingest(pagerduty.ingestPath, JSON.stringify({ event_action: 'explode', dedup_key: 'x' }))).statusCode, 400)
  t.equal(
    (await ingest(pagerduty.ingestPath, JSON.stringify({ title: 'Not PagerDuty-shaped' }))).json().status,
    'created',
    'an unknown shape with a title is generic',
  )
})

t.test('words that name Object.prototype members are unknown words, not table entries', async (t) => {
  const generic = await createConfig({ name: 'Prototype words', format: 'generic', defaultPriority: 'P4' })
  for (const word of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const created = await ingest(generic.ingestPath, JSON.stringify({ title: `priority ${word}`, priority: word, severity: word }))
    t.equal(created.statusCode, 202, created.body)
    const alert = await db
      .selectFrom('divinux.alerts')
      .select('priority')
      .where('id', '=', created.json().alertId)
      .executeTakeFirstOrThrow()
    t.equal(alert.priority, 'P4', `priority ${word} is the config's default`)
  }
  const pagerduty = await createConfig({ name: 'PagerDuty prototype words', format: 'pagerduty' })
  for (const action of ['constructor', 'toString', 'valueOf']) {
    const refused = await ingest(pagerduty.ingestPath, JSON.stringify({ event_action: action, dedup_key: 'x', payload: { summary: 's' } }))
    t.equal(refused.statusCode, 400, `event_action ${action}`)
    t.notMatch(refused.body, /constraint|violates|postgres/i)
  }
})

t.test('Grafana and Datadog deliveries', async (t) => {
  const grafana = await createConfig({ name: 'Grafana', format: 'grafana', defaultPriority: 'P4' })
  const grafanaBody = JSON.stringify({
    receiver: 'x',
    status: 'firing',
    groupKey: 'g',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'CPU high', grafana_folder: 'infra' },
        annotations: {},
        fingerprint: 'gf-1',
        startsAt: '2026-11-23T08:00:00Z',
      },
    ],
    title: '[FIRING:1] CPU high',
  })
  const fromGrafana = (await ingest(grafana.ingestPath, grafanaBody)).json()
  t.match(
    await db.selectFrom('divinux.alerts').selectAll().where('id', '=', fromGrafana.alertId).executeTakeFirstOrThrow(),
    { title: 'CPU high', priority: 'P4', source: 'grafana' },
    'no severity: the config default',
  )
  t.equal((await ingest(grafana.ingestPath, JSON.stringify({ alerts: [] }))).statusCode, 400)

  const datadog = await createConfig({ name: 'Datadog', format: 'datadog' })
  const template = (transition: string) =>
    JSON.stringify({
      id: '1',
      title: '[P1] Checkout down',
      body: 'checkout is down',
      alert_transition: transition,
      priority: 'P1',
      aggregate: 'agg-7',
      alert_id: '7',
      tags: 'service:checkout,env:prod,critical',
      date: String(Date.now()),
    })
  const triggered = (await ingest(datadog.ingestPath, template('Triggered'))).json()
  t.match(await db.selectFrom('divinux.alerts').selectAll().where('id', '=', triggered.alertId).executeTakeFirstOrThrow(), {
    priority: 'P1',
    service: 'checkout',
    fingerprint: 'agg-7',
    labels: { env: 'prod', critical: 'true' },
  })
  t.equal((await ingest(datadog.ingestPath, template('Recovered'))).json().status, 'resolved')
  t.equal((await ingest(datadog.ingestPath, JSON.stringify({ body: 'no title' }))).statusCode, 400)
})

t.test('alerts: list with filters, acknowledge and resolve by compare-and-set', async (t) => {
  const generic = await createConfig({ name: 'Manual', defaultPriority: 'P2' })
  const { alertId } = (
    await ingest(generic.ingestPath, JSON.stringify({ title: 'Search slow', service: 'search', fingerprint: 'search-1' }))
  ).json()

  const listed = (
    await app.inject({ method: 'GET', url: `${alertsUrl}?service=search&status=open&priority=P2`, headers: viewer!.headers })
  ).json()
  t.same(
    listed.data.map((alert: { id: string }) => alert.id),
    [alertId],
  )
  t.equal(listed.meta.total, 1)
  const since = new Date(Date.now() - 60_000).toISOString()
  t.ok(
    (await app.inject({ method: 'GET', url: `${alertsUrl}?from=${since}&source=generic&limit=100`, headers: viewer!.headers }))
      .json()
      .data.some((alert: { id: string }) => alert.id === alertId),
  )
  t.equal(
    (await app.inject({ method: 'GET', url: `${alertsUrl}?to=${since}&service=search`, headers: viewer!.headers })).json().meta.total,
    0,
  )
  t.equal((await app.inject({ method: 'GET', url: `${alertsUrl}?priority=P9`, headers: viewer!.headers })).statusCode, 400)

  t.equal(
    (await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/acknowledge`, headers: viewer!.headers })).statusCode,
    403,
    'a viewer cannot act',
  )
  const acknowledged = await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/acknowledge`, headers: responder!.headers })
  t.match(acknowledged.json(), { status: 'acknowledged', acknowledgedBy: responder!.userId })
  t.equal(
    (await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/acknowledge`, headers: responder!.headers })).statusCode,
    200,
    'acknowledging again answers it as it is',
  )
  const resolved = await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/resolve`, headers: responder!.headers })
  t.match(resolved.json(), { status: 'resolved', resolvedBy: responder!.userId })
  const late = await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/acknowledge`, headers: owner!.headers })
  t.equal(late.statusCode, 409, 'a late acknowledgement never reopens a resolved alert')
  t.equal((await db.selectFrom('divinux.alerts').select('status').where('id', '=', alertId).executeTakeFirstOrThrow()).status, 'resolved')
  t.equal((await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/resolve`, headers: responder!.headers })).statusCode, 200)
  const events = (await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}/events`, headers: viewer!.headers })).json().data
  t.same(
    events.map((event: { type: string; actorUserId: string | null }) => [event.type, event.actorUserId]),
    [
      ['created', null],
      ['acknowledged', responder!.userId],
      ['resolved', responder!.userId],
    ],
  )
})

t.test("another organization's alerts and keys are out of reach", async (t) => {
  const { alertId } = (await ingest((await createConfig({ name: 'Mine' })).ingestPath, JSON.stringify({ title: 'Private' }))).json()
  const theirs = `/api/v1/organizations/${otherOrgId}/alerts`
  for (const path of [`/${alertId}`, `/${alertId}/events`]) {
    t.equal((await app.inject({ method: 'GET', url: `${theirs}${path}`, headers: stranger!.headers })).statusCode, 404)
  }
  for (const action of ['acknowledge', 'resolve']) {
    t.equal((await app.inject({ method: 'POST', url: `${theirs}/${alertId}/${action}`, headers: stranger!.headers })).statusCode, 404)
  }
  t.equal((await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}`, headers: stranger!.headers })).statusCode, 404, 'not a member')
  t.equal((await app.inject({ method: 'GET', url: `${alertsUrl}/not-an-id`, headers: viewer!.headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: theirs, headers: stranger!.headers })).json().meta.total, 0)
  t.equal((await db.selectFrom('divinux.alerts').select('status').where('id', '=', alertId).executeTakeFirstOrThrow()).status, 'open')
})

t.test('concurrent deliveries are written together, each answered for itself', async (t) => {
  const batched = await createConfig({ name: 'Batched', defaultPriority: 'P4' })
  const before = await counts()
  const post = (body: Record<string, unknown>) => ingest(batched.ingestPath, JSON.stringify(body))
  const distinct = Array.from({ length: 12 }, (_, index) => post({ title: `Batch alert ${index}`, fingerprint: `batch-${index}` }))
  const repeated = Array.from({ length: 4 }, () => post({ title: 'Batch repeat', fingerprint: 'batch-repeat' }))
  const poisoned = post({ title: 'Batch poison', labels: { note: 'nul \u0000 inside' } })
  const answers = await Promise.all([...distinct, ...repeated, poisoned])
  const poison = answers.pop()!
  t.equal(poison.statusCode, 400, 'a NUL character is refused, and only its delivery fails')
  t.match(poison.json(), { code: 'BAD_REQUEST', message: 'text must not contain NUL characters' })
  t.ok(answers.every((answer) => answer.statusCode === 202))
  t.same(
    answers.slice(0, 12).map((answer) => answer.json().status),
    Array(12).fill('created'),
  )
  const repeats = answers.slice(12).map((answer) => answer.json() as { alertId: string; status: string })
  t.same(
    repeats.map((answer) => answer.status).sort(),
    ['created', 'deduplicated', 'deduplicated', 'deduplicated'],
    'one problem, one alert',
  )
  t.equal(new Set(repeats.map((answer) => answer.alertId)).size, 1)
  const repeat = await db.selectFrom('divinux.alerts').select('occurrences').where('id', '=', repeats[0]!.alertId).executeTakeFirstOrThrow()
  t.equal(repeat.occurrences, 4)
  const after = await counts()
  t.equal(after.alerts - before.alerts, 13)
  t.equal(after.events - before.events, 14, 'a created entry per alert, and one occurred entry for the repeats')
  const occurred = await db
    .selectFrom('divinux.alertEvents')
    .select('occurrences')
    .where('alertId', '=', repeats[0]!.alertId)
    .where('type', '=', 'occurred')
    .executeTakeFirstOrThrow()
  t.equal(occurred.occurrences, 3, 'counting the three repeats')
})

t.test('ingestion is limited per webhook config, not per source address', async (t) => {
  const limited = await startTestService(t, buildApp, { config: { rateLimit: { max: 6, timeWindow: '1 minute', ingestPerConfig: 8 } } })
  const setup = await alertingOrganization(limited, 'ingest-limits', {})
  const owner = setup.person('owner')!
  const create = async (payload: Record<string, unknown>) =>
    (
      await limited.app.inject({ method: 'POST', url: `/api/v1/organizations/${setup.orgId}/webhooks`, headers: owner.headers, payload })
    ).json() as { id: string; ingestPath: string; rateLimitPerMinute: number | null }
  const storm = await create({ name: 'Storm' })
  const quiet = await create({ name: 'Quiet', rateLimitPerMinute: 1 })
  t.equal(quiet.rateLimitPerMinute, 1)
  // Deliveries come from one monitoring host; the setup above spent 4 of 127.0.0.1's 6.
  const deliver = (path: string, index: number, remoteAddress = '203.0.113.7') =>
    limited.app.inject({
      method: 'POST',
      url: path,
      remoteAddress,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: `event ${index}` }),
    })

  const statuses: number[] = []
  for (let index = 0; index < 9; index += 1) statuses.push((await deliver(storm.ingestPath, index)).statusCode)
  t.same(statuses, [...Array(8).fill(202), 429], 'more than the per-address limit of 6 from one address, up to the config limit of 8')
  const refused = await deliver(storm.ingestPath, 9)
  t.ok(Number(refused.headers['retry-after']) > 0)
  t.same(
    [(await deliver(quiet.ingestPath, 0)).statusCode, (await deliver(quiet.ingestPath, 1)).statusCode],
    [202, 429],
    "a config's own limit",
  )

  const guesses: number[] = []
  for (let index = 0; index < 7; index += 1)
    guesses.push((await deliver(`/api/v1/webhooks/ingest/whk_guess${index}`, index, '198.51.100.1')).statusCode)
  t.same(guesses, [...Array(6).fill(404), 429], 'keys that match no config count against the address')
})

t.test('a path carrying an ingest key is never echoed', async (t) => {
  const response = await app.inject({ method: 'GET', url: `${prometheus.ingestPath}?x=1` })
  t.equal(response.statusCode, 404)
  t.notMatch(response.body, prometheus.apiKey)
  t.match(response.json().message, /ingest\/\[redacted\]/)
})

t.test('repeated firings are counted on one occurrence row, and the timeline is paged', async (t) => {
  const noisy = await createConfig({ name: 'Noisy', format: 'generic' })
  const fire = (index: number) =>
    ingest(noisy.ingestPath, JSON.stringify({ title: 'Disk almost full', fingerprint: 'disk-full', labels: { sample: String(index) } }))
  const alertId = (await fire(0)).json().alertId as string
  for (let index = 1; index <= 30; index += 1) t.equal((await fire(index)).json().status, 'deduplicated')
  const rows = await db
    .selectFrom('divinux.alertEvents')
    .select(['type', 'occurrences', 'data'])
    .where('alertId', '=', alertId)
    .orderBy('createdAt')
    .execute()
  t.same(
    rows.map((row) => [row.type, row.occurrences]),
    [
      ['created', 1],
      ['occurred', 30],
    ],
    'thirty repeats, one row',
  )
  t.match(rows[1]?.data, { labels: { sample: '30' } }, 'with the latest firing’s data')
  const alert = (await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}`, headers: viewer!.headers })).json()
  t.equal(alert.occurrences, 31)

  await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/acknowledge`, headers: responder!.headers })
  await app.inject({ method: 'POST', url: `${alertsUrl}/${alertId}/resolve`, headers: responder!.headers })
  const first = (await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}/events?limit=2`, headers: viewer!.headers })).json()
  t.match(first, { meta: { page: 1, limit: 2, total: 4 }, data: [{ type: 'created' }, { type: 'occurred', occurrences: 30 }] })
  t.match(first.data[1].lastOccurredAt, /^\d{4}-/)
  const second = (
    await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}/events?limit=2&page=2`, headers: viewer!.headers })
  ).json()
  t.same(
    second.data.map((event: { type: string }) => event.type),
    ['acknowledged', 'resolved'],
  )
  t.equal(
    (await app.inject({ method: 'GET', url: `${alertsUrl}/${alertId}/events?limit=101`, headers: viewer!.headers })).statusCode,
    400,
    'at most 100 a page',
  )
})

t.test('a page of the alert list is kept until an alert of its organization changes, and shown to members only', async (t) => {
  const kept = await createConfig({ name: 'Kept' })
  const fire = async (title: string, fingerprint: string, config = kept) =>
    (await ingest(config.ingestPath, JSON.stringify({ title, service: 'kept', fingerprint }))).json().alertId as string
  const page = async (who = viewer!) => (await app.inject({ method: 'GET', url: `${alertsUrl}?service=kept`, headers: who.headers })).json()
  const titles = async (who = viewer!) => (await page(who)).data.map((alert: { title: string }) => alert.title)
  // A change no trigger announces (replication's role turns them off): the only way a kept page shows.
  const unannounced = (alertId: string, title: string) =>
    db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx)
      await trx.updateTable('divinux.alerts').set({ title }).where('id', '=', alertId).execute()
    })

  const first = await fire('Queue deep', 'kept-1')
  t.same(await titles(), ['Queue deep'])
  await unannounced(first, 'Queue deeper')
  t.same(await titles(), ['Queue deep'], 'the page was kept: no rows read')
  t.same(await titles(responder!), ['Queue deep'], 'one kept page serves every member who may read it')
  t.equal(
    (await app.inject({ method: 'GET', url: `${alertsUrl}?service=kept`, headers: stranger!.headers })).statusCode,
    404,
    'the access rule still runs first: a kept page is no way in',
  )

  const strangers = await createConfig({ name: 'Theirs' }, otherOrgId, stranger!)
  await fire('Elsewhere', 'kept-elsewhere', strangers)
  t.same(await titles(), ['Queue deep'], "another organization's alert changes nothing here")

  const second = await fire('Disk full', 'kept-2')
  t.same(await titles(), ['Disk full', 'Queue deeper'], 'a new alert is listed at once, with the rows as they are')
  const acknowledged = await app.inject({ method: 'POST', url: `${alertsUrl}/${second}/acknowledge`, headers: responder!.headers })
  t.equal(acknowledged.statusCode, 200)
  t.same(
    (await page()).data.map((alert: { status: string }) => alert.status),
    ['acknowledged', 'open'],
    'an acknowledgement is listed at once',
  )
})
