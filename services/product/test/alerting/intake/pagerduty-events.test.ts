import { Agent } from 'node:https'
import type { AddressInfo } from 'node:net'
import { event as pagerDutyEvent, change, resolve, acknowledge, trigger } from '@pagerduty/pdjs'
import t from 'tap'
import { ALERTMANAGER_BINARY, alertmanagerPresent, startAlertmanager, startTestService, startTlsFront, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'pd', {})
const owner = person('owner')

async function createConfig(payload: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: `/api/v1/organizations/${orgId}/webhooks`, headers: owner.headers, payload })
  if (response.statusCode !== 201) throw new Error(`config not created: ${response.body}`)
  return response.json() as { id: string; apiKey: string }
}
const pagerDuty = await createConfig({ name: 'PagerDuty senders', format: 'pagerduty' })
const generic = await createConfig({ name: 'Generic', format: 'generic' })

// PagerDuty's SDK builds https://<server>/v2/enqueue: it reaches the service through a loopback TLS front.
const front = await startTlsFront(t, app)
const client = { server: front.host, agent: new Agent({ ca: front.ca }), retryTimeout: 10 }
// The SDK's shorthands set `event_action` themselves; its types ask for the whole v2 event anyway.
type Data = Record<string, unknown>
const sdk = {
  trigger: (data: Data) => trigger({ ...client, data: data as never }),
  acknowledge: (data: Data) => acknowledge({ ...client, data: data as never }),
  resolve: (data: Data) => resolve({ ...client, data: data as never }),
  event: (data: Data) => pagerDutyEvent({ ...client, data: data as never }),
  change: (data: Data) => change({ ...client, data: data as never }),
}

const alertOf = (fingerprint: string) =>
  db
    .selectFrom('divinux.alerts')
    .select(['id', 'status', 'title', 'priority', 'service', 'source', 'labels'])
    .where('organizationId', '=', orgId)
    .where('fingerprint', '=', fingerprint)
    .orderBy('createdAt', 'desc')
    .executeTakeFirst()

t.test('the PagerDuty SDK triggers, acknowledges and resolves an alert by dedup_key', async (t) => {
  const triggered = await sdk.trigger({
    routing_key: pagerDuty.apiKey,
    payload: {
      summary: 'Checkout latency above 2s',
      source: 'checkout-1.prod',
      severity: 'critical',
      component: 'checkout',
      custom_details: { p99: '2.4s' },
    },
  })
  t.equal(triggered.status, 202)
  t.match(triggered.data, { status: 'success', message: 'Event processed', dedup_key: /^[0-9a-f-]{36}$/ })
  const dedupKey = (triggered.data as { dedup_key: string }).dedup_key
  t.match(await alertOf(dedupKey), {
    status: 'open',
    title: 'Checkout latency above 2s',
    priority: 'P1',
    service: 'checkout',
    source: 'pagerduty',
    labels: { p99: '2.4s', source: 'checkout-1.prod' },
  })

  const acknowledged = await sdk.acknowledge({ routing_key: pagerDuty.apiKey, dedup_key: dedupKey })
  t.equal(acknowledged.status, 202)
  t.same(acknowledged.data, { status: 'success', message: 'Event processed', dedup_key: dedupKey })
  t.equal((await alertOf(dedupKey))?.status, 'acknowledged')
  const resolved = await sdk.resolve({ routing_key: pagerDuty.apiKey, dedup_key: dedupKey })
  t.equal(resolved.status, 202)
  t.equal((await alertOf(dedupKey))?.status, 'resolved')

  const keyed = await sdk.trigger({
    routing_key: pagerDuty.apiKey,
    dedup_key: 'disk/db-1',
    payload: { summary: 'Disk 91%', source: 'db-1', severity: 'warning' },
  })
  t.same(keyed.data, { status: 'success', message: 'Event processed', dedup_key: 'disk/db-1' }, 'the sender’s key is kept')
  t.match(await alertOf('disk/db-1'), { status: 'open', priority: 'P3' })
})

t.test('what PagerDuty refuses is a 400 in PagerDuty’s shape, and nothing is stored', async (t) => {
  const before = await db
    .selectFrom('divinux.alerts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  const missing = await sdk.trigger({ routing_key: pagerDuty.apiKey, payload: { summary: 'No severity', source: 'x' } })
  t.equal(missing.status, 400)
  t.same(missing.data, {
    status: 'invalid event',
    message: 'Event object is invalid',
    errors: ["'payload.severity' must be one of critical, error, warning, info"],
  })
  const noKey = await sdk.resolve({ routing_key: pagerDuty.apiKey })
  t.same((noKey.data as { errors: string[] }).errors, ["'dedup_key' is required to resolve"])
  const badAction = await sdk.event({ routing_key: pagerDuty.apiKey, event_action: 'explode' })
  t.match(badAction.data, { status: 'invalid event', errors: [/event_action/] })
  const unknown = await sdk.trigger({
    routing_key: 'R0UTINGKEYTHATISNOTOURS000000000',
    payload: { summary: 's', source: 's', severity: 'info' },
  })
  t.equal(unknown.status, 400)
  t.same((unknown.data as { errors: string[] }).errors, ['Invalid routing key'])
  const otherFormat = await sdk.trigger({ routing_key: generic.apiKey, payload: { summary: 's', source: 's', severity: 'info' } })
  t.equal(otherFormat.status, 400)
  t.match((otherFormat.data as { errors: string[] }).errors, [/not for the PagerDuty format: this config takes generic/])
  const malformed = await app.inject({
    method: 'POST',
    url: '/v2/enqueue',
    headers: { 'content-type': 'application/json' },
    payload: '{"routing_key":',
  })
  t.equal(malformed.statusCode, 400)
  t.match(malformed.json(), { status: 'invalid event', errors: ['Malformed JSON'] })
  const after = await db
    .selectFrom('divinux.alerts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  t.equal(Number(after.n), Number(before.n))
})

t.test('past the config’s rate limit the SDK gets PagerDuty’s 429', async (t) => {
  const limited = await createConfig({ name: 'Limited', format: 'pagerduty', rateLimitPerMinute: 1 })
  const send = () => sdk.trigger({ routing_key: limited.apiKey, payload: { summary: 'Flapping', source: 'edge', severity: 'error' } })
  t.equal((await send()).status, 202)
  const throttled = await send()
  t.equal(throttled.status, 429, 'after the SDK’s own retries')
  t.match(throttled.data, { status: 'throttle event', message: /arriving too quickly/ })
})

t.test('a change event becomes a deploy event', async (t) => {
  const changed = await sdk.change({
    routing_key: pagerDuty.apiKey,
    payload: {
      summary: 'Build Success: increase snapshot timeout',
      timestamp: '2026-11-27T08:42:58.315+0000',
      source: 'build-pipeline',
      custom_details: { service: 'checkout', environment: 'production', version: 'v2.4.1', commit: 'abc1234' },
    },
    links: [{ href: 'https://ci.example.com/build/2', text: 'Build' }],
  })
  t.equal(changed.status, 202)
  t.same(changed.data, { status: 'success', message: 'Change event processed' })
  const deploys = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${orgId}/deploy-events?service=checkout`,
    headers: owner.headers,
  })
  t.match(deploys.json().data, [
    {
      service: 'checkout',
      environment: 'production',
      version: 'v2.4.1',
      commitSha: 'abc1234',
      url: 'https://ci.example.com/build/2',
      source: 'pagerduty',
      deployedAt: '2026-11-27T08:42:58.315Z',
    },
  ])
  const refused = await sdk.change({ routing_key: pagerDuty.apiKey, payload: { source: 'x' } })
  t.equal(refused.status, 400)
  t.same((refused.data as { errors: string[] }).errors, ["'payload.summary' is missing or blank"])
})

const haveAlertmanager = alertmanagerPresent()

t.test(
  'Alertmanager’s pagerduty_configs, pointed at us, trigger and resolve',
  { skip: haveAlertmanager ? false : `${ALERTMANAGER_BINARY} is not installed (apt-get install prometheus-alertmanager)` },
  async (t) => {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const ingestUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v2/enqueue`
    const { api } = await startAlertmanager(
      t,
      [
        'route:',
        '  receiver: pagerduty',
        '  group_by: [alertname]',
        '  group_wait: 0s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: pagerduty',
        '    pagerduty_configs:',
        `      - routing_key: ${pagerDuty.apiKey}`,
        `        url: ${ingestUrl}`,
        '        severity: critical',
      ].join('\n'),
    )
    const alert = { labels: { alertname: 'QueueBacklog', queue: 'payments' }, annotations: { summary: 'Payments queue backlog' } }
    const post = (endsAt?: string) =>
      fetch(`${api}/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ ...alert, ...(endsAt ? { endsAt } : {}) }]),
      })
    t.equal((await post()).status, 200)
    const fromAlertmanager = () =>
      db
        .selectFrom('divinux.alerts')
        .select(['status', 'title', 'priority'])
        .where('organizationId', '=', orgId)
        .where('title', 'like', '%QueueBacklog%')
        .executeTakeFirst()
    await until('the trigger from Alertmanager', async () => (await fromAlertmanager())?.status === 'open', 20_000)
    t.match(await fromAlertmanager(), { status: 'open', priority: 'P1' })

    t.equal((await post(new Date(Date.now() - 1000).toISOString())).status, 200)
    await until('the resolve from Alertmanager', async () => (await fromAlertmanager())?.status === 'resolved', 20_000)
    t.pass('the resolved notification resolved it')
  },
)
