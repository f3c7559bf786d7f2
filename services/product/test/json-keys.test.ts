import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// The keys inside JSON values are our users' data (decision 0004): Prometheus label names are
// case- and underscore-exact, header names are what the target reads. Each of these keys would
// come back renamed if the camelCase mapping of column names reached into values.
const keys = { kube_namespace: 'billing', HTTPCode: '503', 'x-request-id': 'req-1', 'a.b': 'dotted', __meta_x: 'meta' }
const renamed = /kubeNamespace|MetaX|_MetaX/

const receiver = await startWebhookReceiver(t, () => ({ status: 204 }))
const service = await startTestService(t, buildApp, { config: { outbound: { allowPrivateTargets: true } } })
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'jsonkeys', {
  manager: { alerting: 'manager', synthetics: 'manager', insights: 'viewer' },
})
const manager = person('manager')
const base = `/api/v1/organizations/${orgId}`
const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: manager.headers, ...(payload ? { payload } : {}) })
const created = async (url: string, payload: object) => {
  const response = await call('POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

async function configOf(format: string) {
  return (await created(`${base}/webhooks`, { name: `Keys ${format}`, format })) as { id: string; ingestPath: string }
}
async function ingest(ingestPath: string, body: object) {
  const response = await app.inject({ method: 'POST', url: ingestPath, headers: { 'content-type': 'application/json' }, payload: body })
  if (response.statusCode !== 202) throw new Error(`ingestion refused: ${response.body}`)
  return response.json().alertId as string
}

const hook = await created(`${base}/outbound-webhooks`, { name: 'Keys', url: `${receiver.url}/keys`, events: ['alert.created'] })

t.test('Alertmanager labels come back, and go out in outbound webhooks, exactly as they were sent', async (t) => {
  const config = await configOf('alertmanager')
  const alertId = await ingest(config.ingestPath, {
    version: '4',
    status: 'firing',
    receiver: 'incident-platform',
    groupKey: '{}:{alertname="Latency"}',
    commonLabels: { alertname: 'Latency' },
    alerts: [{ status: 'firing', labels: { ...keys, severity: 'warning' }, annotations: { summary: 'Slow' }, fingerprint: 'keys-1' }],
  })
  const alert = (await call('GET', `${base}/alerts/${alertId}`)).json()
  t.match(alert.labels, keys)
  const listed = (await call('GET', `${base}/alerts?limit=100`)).json().data.find((row: { id: string }) => row.id === alertId)
  t.match(listed.labels, keys)
  const timeline = (await call('GET', `${base}/alerts/${alertId}/events`)).json()
  t.notMatch(JSON.stringify(timeline), renamed, 'the timeline keeps them too')

  const delivery = await until('the alert.created delivery', () =>
    receiver.received.find((entry) => entry.path === '/keys' && entry.raw.includes(alertId)),
  )
  const event = new Webhook(hook.secret).verify(delivery.raw, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  }) as { data: { alert: { labels: Record<string, string> } } }
  t.match(event.data.alert.labels, keys)
})

t.test('PagerDuty custom details keep their keys', async (t) => {
  const config = await configOf('pagerduty')
  const alertId = await ingest(config.ingestPath, {
    routing_key: 'ignored',
    event_action: 'trigger',
    dedup_key: 'keys-pd',
    payload: { summary: 'p99 high', source: 'api-1', severity: 'error', custom_details: { p99_ms: '812', ...keys } },
  })
  t.match((await call('GET', `${base}/alerts/${alertId}`)).json().labels, { p99_ms: '812', ...keys })
})

t.test('a workflow condition, a routing rule and a silence keep their label keys and match on them', async (t) => {
  const workflow = await created(`${base}/workflows`, {
    name: 'Billing namespace',
    trigger: 'alert.created',
    conditions: [{ type: 'labels', match: { kube_namespace: 'billing', __meta_x: 'meta' } }],
    actions: [{ type: 'set_priority', priority: 'P2' }],
  })
  t.same(workflow.conditions, [{ type: 'labels', match: { kube_namespace: 'billing', __meta_x: 'meta' } }])
  t.same((await call('GET', `${base}/workflows/${workflow.id}`)).json().conditions, workflow.conditions)

  const policy = await created(`${base}/escalation-policies`, {
    name: 'Keys',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: person('owner').userId }] }],
  })
  const routed = await created(`${base}/webhooks`, {
    name: 'Routed',
    routingRules: [{ match: { labels: { kube_namespace: 'billing', 'a.b': 'dotted' } }, escalationPolicyId: policy.id }],
  })
  t.same((await call('GET', `${base}/webhooks/${routed.id}`)).json().routingRules[0].match, {
    labels: { kube_namespace: 'billing', 'a.b': 'dotted' },
  })
  const silence = await created(`${base}/silences`, {
    comment: 'billing maintenance',
    matchers: { labels: { kube_namespace: 'billing', HTTPCode: '503' } },
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
  })
  t.same((await call('GET', `${base}/silences/${silence.id}`)).json().matchers, { labels: { kube_namespace: 'billing', HTTPCode: '503' } })

  const alertId = await ingest(routed.ingestPath, { title: 'Billing pods restarting', labels: keys })
  const run = await until('the workflow run', async () => {
    const runs = (await call('GET', `${base}/workflows/${workflow.id}/runs`)).json().data as Array<{ alertId: string; status: string }>
    return runs.find((entry) => entry.alertId === alertId && !['queued', 'running'].includes(entry.status))
  })
  t.match(run, { status: 'succeeded' })
  const kept = await app.database.db
    .selectFrom('divinux.workflowRuns')
    .select('definition')
    .where('alertId', '=', alertId)
    .executeTakeFirstOrThrow()
  t.match(
    kept.definition,
    { conditions: [{ match: { kube_namespace: 'billing', __meta_x: 'meta' } }] },
    'the run keeps the definition it followed',
  )
  t.equal((await call('GET', `${base}/alerts/${alertId}`)).json().priority, 'P2', 'the condition matched the exact keys')
  const escalation = await until('the alert to be held by the silence', async () => {
    const timeline = (await call('GET', `${base}/alerts/${alertId}/events`)).json().data as Array<{ type: string }>
    return timeline.some((entry) => entry.type === 'silenced') && timeline
  })
  t.ok(escalation, 'the silence on kube_namespace held it')
})

t.test('a check’s request headers keep their names through a change of something else, and reach the target so', async (t) => {
  const seen: Array<Record<string, string | string[] | undefined>> = []
  const target = createServer((request, response) => {
    seen.push(request.headers)
    response.writeHead(200).end('ok')
  })
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((done) => target.close(done)))
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`
  const checks = `/api/v1/synthetics/organizations/${orgId}/checks`
  const headers = { 'x-request-id': 'synthetic', X_Trace_Id: 'abc', HTTPCode: 'yes' }
  const check = await created(checks, { name: 'Keys', kind: 'http', frequencySeconds: 300, request: { url, headers } })
  t.same(check.request.headers, headers)
  const renamedCheck = await call('PATCH', `${checks}/${check.id}`, { name: 'Keys, renamed' })
  t.equal(renamedCheck.statusCode, 200, renamedCheck.body)
  t.same(renamedCheck.json().request.headers, headers, 'a change of the name writes the request back as it was')
  t.same((await call('GET', `${checks}/${check.id}`)).json().request.headers, headers)
  const request = await until('a run of the changed check', () => seen.find((entry) => entry['x_trace_id'] === 'abc'))
  t.equal(request['httpcode'], 'yes')
})
