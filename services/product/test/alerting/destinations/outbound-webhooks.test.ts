import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { startTestService, startWebhookReceiver, type ReceivedRequest, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const receiver = await startWebhookReceiver(t, (path, attempt) =>
  path === '/flaky' && attempt === 1 ? { status: 503, body: 'busy' } : { status: 204 },
)
const service = await startTestService(t, buildApp, { config: { outbound: { allowPrivateTargets: true } } })
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'hooks', {
  manager: 'manager',
  ada: 'responder',
  viewer: 'viewer',
})
const [manager, ada, viewer, stranger] = ['manager', 'ada', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

/** What a receiver does with a delivery: verify it with the Standard Webhooks library. */
const verified = (secret: string, request: ReceivedRequest) =>
  new Webhook(secret).verify(request.raw, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; data: { alert: { id: string; title: string }; escalation?: object } }

const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring' })).json()
const ingest = async (event: object) =>
  (
    await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(event),
    })
  ).json().alertId as string

let hook = { id: '', secret: '' }

t.test('outbound webhooks are created with events and a secret shown once; bad ones are refused', async (t) => {
  const created = await call(manager!, 'POST', `${base}/outbound-webhooks`, {
    name: 'Status sync',
    url: `${receiver.url}/status-sync`,
    events: ['alert.created', 'alert.resolved'],
  })
  t.equal(created.statusCode, 201)
  hook = { id: created.json().id, secret: created.json().secret }
  t.match(hook.secret, /^whsec_[A-Za-z0-9+/=]{32}$/)
  t.notOk((await call(viewer!, 'GET', `${base}/outbound-webhooks/${hook.id}`)).json().secret, 'never answered again')
  const refused: Array<[object, number, RegExp]> = [
    [{ name: 'X', url: 'ftp://example.com/x', events: ['alert.created'] }, 400, /url must be an http or https URL/],
    [{ name: 'X', url: `${receiver.url}/x`, events: [] }, 400, /events/],
    [{ name: 'X', url: `${receiver.url}/x`, events: ['alert.exploded'] }, 400, /events/],
    [{ name: 'status SYNC', url: `${receiver.url}/x`, events: ['alert.created'] }, 409, /exists/],
  ]
  for (const [payload, status, message] of refused) {
    const response = await call(manager!, 'POST', `${base}/outbound-webhooks`, payload)
    t.equal(response.statusCode, status)
    t.match(response.json().message, message)
  }
  t.equal(
    (await call(viewer!, 'POST', `${base}/outbound-webhooks`, { name: 'Y', url: `${receiver.url}/y`, events: ['alert.created'] }))
      .statusCode,
    403,
  )
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/outbound-webhooks/${hook.id}`)).statusCode, 404)
  const audit = await db.selectFrom('core.auditLogs').select('changes').where('entityId', '=', hook.id).executeTakeFirstOrThrow()
  t.notMatch(JSON.stringify(audit.changes), /whsec_/)
})

t.test('alert events are delivered signed per Standard Webhooks, only those subscribed to', async (t) => {
  const alertId = await ingest({ title: 'Queue depth high', service: 'queue' })
  const delivery = await until('the alert.created delivery', () => receiver.received.find((entry) => entry.path === '/status-sync'))
  const event = verified(hook.secret, delivery)
  t.match(event, { type: 'alert.created', data: { alert: { id: alertId, title: 'Queue depth high' } } })
  t.match(String(delivery.headers['webhook-id']), /^msg_[0-9a-f-]{36}$/)
  t.throws(
    () =>
      new Webhook(`whsec_${Buffer.from('another secret of enough length').toString('base64')}`).verify(
        delivery.raw,
        delivery.headers as Record<string, string>,
      ),
    'another secret does not verify it',
  )

  t.equal((await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)).statusCode, 200)
  t.equal((await call(ada!, 'POST', `${base}/alerts/${alertId}/resolve`)).statusCode, 200)
  const resolved = await until('the alert.resolved delivery', () =>
    receiver.received
      .filter((entry) => entry.path === '/status-sync')
      .find((entry) => verified(hook.secret, entry).type === 'alert.resolved'),
  )
  t.ok(resolved)
  t.same(
    receiver.received.filter((entry) => entry.path === '/status-sync').map((entry) => verified(hook.secret, entry).type),
    ['alert.created', 'alert.resolved'],
    'the acknowledgement was not subscribed to',
  )
  // The receiver has the request before the sender has its answer and records the delivery.
  const log = await until('the alert.resolved delivery recorded', async () => {
    const page = (await call(viewer!, 'GET', `${base}/outbound-webhooks/${hook.id}/deliveries`)).json()
    return page.data?.[0]?.status === 'delivered' && page
  })
  t.match(log, {
    meta: { total: 2 },
    data: [
      { event: 'alert.resolved', status: 'delivered', attempts: 1, responseStatus: 204 },
      { event: 'alert.created', status: 'delivered' },
    ],
  })
})

t.test('a refused delivery is retried with the same id and payload until it succeeds', async (t) => {
  const flaky = (
    await call(manager!, 'POST', `${base}/outbound-webhooks`, { name: 'Flaky', url: `${receiver.url}/flaky`, events: ['alert.created'] })
  ).json()
  await ingest({ title: 'Disk 90%' })
  await until('the first try', () => receiver.received.find((entry) => entry.path === '/flaky'))
  const pending = await until('the failure to be logged', async () => {
    const data = (await call(viewer!, 'GET', `${base}/outbound-webhooks/${flaky.id}/deliveries`)).json().data
    return data[0]?.responseStatus === 503 && data[0]
  })
  t.match(pending, { status: 'pending', responseStatus: 503, error: 'answered 503: busy' })
  // As if the backoff had passed: once pg-boss has put the job back for its retry (the delivery log
  // has the failure a moment before), its start is brought to now.
  await until('the job to wait for its retry', async () => {
    const moved = await sql`update pgboss.job set start_after = now() where name = 'alerting.webhook-delivery' and state = 'retry'`.execute(
      db,
    )
    return Number(moved.numAffectedRows ?? 0) > 0
  })
  const delivered = await until('the retry', async () => {
    const data = (await call(viewer!, 'GET', `${base}/outbound-webhooks/${flaky.id}/deliveries`)).json().data
    return data[0]?.status === 'delivered' && data[0]
  })
  t.match(delivered, { attempts: 2, responseStatus: 204, error: null })
  const tries = receiver.received.filter((entry) => entry.path === '/flaky')
  t.equal(tries.length, 2)
  t.equal(tries[0]!.headers['webhook-id'], tries[1]!.headers['webhook-id'], 'one id across retries')
  t.equal(tries[0]!.raw, tries[1]!.raw, 'the same bytes')
  t.equal((await call(manager!, 'DELETE', `${base}/outbound-webhooks/${flaky.id}`)).statusCode, 204)
})

t.test('an escalation step can call a webhook (alert.escalated); a rotated secret signs what follows', async (t) => {
  const rotated = await call(manager!, 'POST', `${base}/outbound-webhooks/${hook.id}/rotate-secret`)
  t.equal(rotated.statusCode, 200)
  const secret = rotated.json().secret
  t.not(secret, hook.secret)
  const policy = (
    await call(manager!, 'POST', `${base}/escalation-policies`, {
      name: 'Hooks',
      steps: [{ delayMinutes: 5, targets: [{ type: 'webhook', id: hook.id }] }],
    })
  ).json()
  const paging = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Paging', escalationPolicyId: policy.id })).json()
  const alertId = (
    await app.inject({
      method: 'POST',
      url: paging.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'API down' }),
    })
  ).json().alertId
  const escalated = await until('the alert.escalated delivery', () =>
    receiver.received
      .filter((entry) => entry.path === '/status-sync')
      .find((entry) => (JSON.parse(entry.raw) as { type: string }).type === 'alert.escalated'),
  )
  t.match(verified(secret, escalated), {
    type: 'alert.escalated',
    data: { alert: { id: alertId }, escalation: { round: 0, step: 0, policy: 'Hooks' } },
  })
  const attempt = await until('the attempt to settle', async () => {
    const data = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data
    return data[0]?.status !== 'queued' && data[0]
  })
  t.match(attempt, { channel: 'webhook', status: 'sent', target: { type: 'webhook', id: hook.id } })

  t.equal((await call(manager!, 'DELETE', `${base}/outbound-webhooks/${hook.id}`)).statusCode, 204)
  t.same((await call(viewer!, 'GET', `${base}/escalation-policies/${policy.id}`)).json().steps[0].targets, [], 'it left the policy')
})
