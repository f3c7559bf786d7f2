import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// The chat answers 503 to the first post to /busy: the run tries again later and resumes there.
const receiver = await startWebhookReceiver(t, (path, attempt) =>
  path.startsWith('/busy') && attempt === 1
    ? { status: 503, body: 'busy' }
    : path.startsWith('/gone')
      ? { status: 404, body: 'no such webhook' }
      : { status: 200, body: 'ok' },
)
const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: true }, productLinkBase: 'https://product.example' },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'flows', {
  manager: 'manager',
  ada: 'responder',
  viewer: 'viewer',
})
const [manager, ada, viewer, stranger] = ['manager', 'ada', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const created = async (url: string, payload: object) => {
  const response = await call(manager!, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.body}`)
  return response.json() as { id: string; secret?: string; ingestPath: string; apiKey: string }
}

const config = await created(`${base}/webhooks`, { name: 'Monitoring' })
const ingest = async (event: object) =>
  (
    await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(event),
    })
  ).json().alertId as string
const deploy = (body: object, deliveryId = randomUUID()) =>
  app.inject({
    method: 'POST',
    url: `${base}/deploy-events/ingest/${config.apiKey}`,
    headers: { 'content-type': 'application/json', 'x-delivery-id': deliveryId },
    payload: JSON.stringify(body),
  })

const chat = await created(`${base}/chat-integrations`, { name: 'Ops room', kind: 'slack', webhookUrl: `${receiver.url}/ops-room` })
const busyChat = await created(`${base}/chat-integrations`, { name: 'Busy room', kind: 'slack', webhookUrl: `${receiver.url}/busy` })
const hook = await created(`${base}/outbound-webhooks`, { name: 'Tracker', url: `${receiver.url}/tracker`, events: ['alert.escalated'] })
const policy = await created(`${base}/escalation-policies`, {
  name: 'Checkout',
  steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: manager!.userId }] }],
})
const theirChat = (
  await call(stranger!, 'POST', `/api/v1/organizations/${otherOrgId}/chat-integrations`, {
    name: 'Theirs',
    kind: 'slack',
    webhookUrl: `${receiver.url}/theirs`,
  })
).json().id as string

const runsOf = async (workflowId: string) =>
  (await call(viewer!, 'GET', `${base}/workflows/${workflowId}/runs`)).json().data as Array<{
    status: string
    alertId: string | null
    deployEventId: string | null
    conditions: Array<{ type: string; matched: boolean; detail: string }>
    actions: Array<{ type: string; status: string; detail: string }>
  }>
const finishedRun = (workflowId: string, subjectId: string) =>
  until(`a finished run of ${workflowId} for ${subjectId}`, async () =>
    (await runsOf(workflowId)).find(
      (run) => (run.alertId === subjectId || run.deployEventId === subjectId) && !['queued', 'running'].includes(run.status),
    ),
  )
const fromTracker = (index: number) => {
  const request = receiver.received.filter((entry) => entry.path === '/tracker')[index]!
  return new Webhook(hook.secret!).verify(request.raw, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; data: Record<string, { id?: string; service?: string; name?: string }> }
}

let triage = ''

t.test('workflows are created with a trigger, conditions and actions; ones that could not run are refused', async (t) => {
  const response = await call(manager!, 'POST', `${base}/workflows`, {
    name: 'Checkout triage',
    trigger: 'alert.created',
    conditions: [
      { type: 'priority', in: ['P3', 'P4'] },
      { type: 'service', in: ['checkout'] },
      { type: 'deploy_recent', withinMinutes: 30 },
    ],
    actions: [
      { type: 'set_priority', priority: 'P2' },
      { type: 'open_command_room' },
      { type: 'notify_chat', chatIntegrationId: chat.id },
      { type: 'call_webhook', outboundWebhookId: hook.id },
      { type: 'escalate', escalationPolicyId: policy.id },
      { type: 'start_analysis' },
    ],
  })
  t.equal(response.statusCode, 201)
  triage = response.json().id
  t.match(response.json(), { enabled: true, trigger: 'alert.created', problems: [], conditions: { length: 3 }, actions: { length: 6 } })
  t.match((await call(viewer!, 'GET', `${base}/workflows`)).json(), { meta: { total: 1 }, data: [{ name: 'Checkout triage' }] })
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/workflows/${triage}`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${base}/workflows/not-a-uuid`)).statusCode, 404)

  const notify = { type: 'notify_chat', chatIntegrationId: chat.id }
  const refused: Array<[string, Who, object, number, RegExp]> = [
    ['a viewer', viewer!, { name: 'X', trigger: 'alert.created', actions: [notify] }, 403, /./],
    ['no actions', manager!, { name: 'X', trigger: 'alert.created', actions: [] }, 400, /actions/],
    ['an unknown trigger', manager!, { name: 'X', trigger: 'alert.exploded', actions: [notify] }, 400, /trigger/],
    [
      'an alert condition on deploys',
      manager!,
      { name: 'X', trigger: 'deploy.recorded', conditions: [{ type: 'priority', in: ['P1'] }], actions: [notify] },
      400,
      /conditions\/0\/type priority applies to alert triggers/,
    ],
    [
      'a deploy condition on alerts',
      manager!,
      { name: 'X', trigger: 'alert.resolved', conditions: [{ type: 'environment', in: ['production'] }], actions: [notify] },
      400,
      /conditions\/0\/type environment applies to deploy.recorded, not alert.resolved/,
    ],
    [
      'an alert action on deploys',
      manager!,
      { name: 'X', trigger: 'deploy.recorded', actions: [notify, { type: 'set_priority', priority: 'P1' }] },
      400,
      /actions\/1\/type set_priority acts on alert triggers, not deploy.recorded/,
    ],
    [
      'another organization’s chat integration',
      manager!,
      { name: 'X', trigger: 'alert.created', actions: [{ type: 'notify_chat', chatIntegrationId: theirChat }] },
      400,
      /actions\/0\/chatIntegrationId is not a chat integration of this organization/,
    ],
    [
      'an unknown policy',
      manager!,
      { name: 'X', trigger: 'alert.created', actions: [{ type: 'escalate', escalationPolicyId: randomUUID() }] },
      400,
      /actions\/0\/escalationPolicyId/,
    ],
    [
      'deploy_recent beyond a day',
      manager!,
      { name: 'X', trigger: 'alert.created', conditions: [{ type: 'deploy_recent', withinMinutes: 2000 }], actions: [notify] },
      400,
      /withinMinutes/,
    ],
    ['a taken name', manager!, { name: 'checkout TRIAGE', trigger: 'alert.created', actions: [notify] }, 409, /exists/],
  ]
  for (const [what, who, payload, status, message] of refused) {
    const answer = await call(who, 'POST', `${base}/workflows`, payload)
    t.equal(answer.statusCode, status, what)
    t.match(answer.json().message, message, what)
  }
  t.equal((await call(viewer!, 'GET', `${base}/workflows`)).json().meta.total, 1, 'nothing refused was stored')
  const patched = await call(manager!, 'PATCH', `${base}/workflows/${triage}`, { trigger: 'deploy.recorded' })
  t.equal(patched.statusCode, 400, 'a change is checked against the workflow as a whole')
  t.match(patched.json().message, /conditions\/0\/type priority applies to alert triggers/)
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', triage).execute()
  t.same(
    audit.map((row) => row.action),
    ['workflow.created'],
  )
})

t.test('an alert that meets every condition runs every action, each outcome recorded', async (t) => {
  t.equal((await deploy({ service: 'checkout', environment: 'production', version: 'v42', status: 'success' })).statusCode, 201)
  const alertId = await ingest({ title: 'Checkout errors', service: 'checkout', priority: 'P3' })
  const run = await finishedRun(triage, alertId)
  t.equal(run.status, 'succeeded')
  t.match(run.conditions, [
    { type: 'priority', matched: true },
    { type: 'service', matched: true },
    { type: 'deploy_recent', matched: true, detail: /checkout was deployed at .* \(v42\)/ },
  ])
  t.match(run.actions, [
    { type: 'set_priority', status: 'succeeded', detail: 'priority changed from P3 to P2' },
    { type: 'open_command_room', status: 'skipped', detail: 'the alert is P2: it has its command room' },
    { type: 'notify_chat', status: 'succeeded', detail: 'posted to "Ops room"' },
    { type: 'call_webhook', status: 'succeeded', detail: /^delivery .* queued/ },
    { type: 'escalate', status: 'succeeded', detail: 'escalating with "Checkout"' },
    { type: 'start_analysis', status: 'succeeded', detail: /^analysis .* requested$/ },
  ])
  t.match((await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json(), { priority: 'P2' })
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${alertId}/command-room`)).statusCode, 200, 'a P2 alert has its room')

  const posted = await until('the chat post', () => receiver.received.find((entry) => entry.path === '/ops-room'))
  t.match(JSON.stringify(posted.body), /\[P2\] Checkout errors.*Workflow \\"Checkout triage\\"/)
  await until('the webhook delivery', () => receiver.received.find((entry) => entry.path === '/tracker'))
  t.match(fromTracker(0), { type: 'alert.created', data: { alert: { id: alertId }, workflow: { name: 'Checkout triage' } } })
  const escalation = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().escalation
  t.equal(escalation.policyId, policy.id, 'the alert escalates with the workflow’s policy')
  const timeline = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/events`)).json().data as Array<{ type: string }>
  t.ok(timeline.some((entry) => entry.type === 'priority_changed'))
})

t.test('an alert that misses a condition runs nothing, and the run says which condition', async (t) => {
  const alertId = await ingest({ title: 'Search slow', service: 'search', priority: 'P3' })
  const run = await finishedRun(triage, alertId)
  t.equal(run.status, 'not_matched')
  t.same(run.actions, [])
  t.match(run.conditions, [
    { matched: true },
    { matched: false, detail: 'service "search" is not one of "checkout"' },
    { matched: false, detail: 'no deploy of search in the 30 minutes before' },
  ])
  t.match((await call(viewer!, 'GET', `${base}/alerts/${alertId}`)).json(), { priority: 'P3' })
  t.equal((await call(viewer!, 'GET', `${base}/workflows/${triage}/runs?status=not_matched`)).json().meta.total, 1)
})

t.test('a low-priority alert gets a command room when a workflow opens one', async (t) => {
  const room = await created(`${base}/workflows`, {
    name: 'Payments rooms',
    trigger: 'alert.created',
    conditions: [{ type: 'labels', match: { team: 'payments' } }],
    actions: [{ type: 'open_command_room' }],
  })
  const other = await ingest({ title: 'Card declines', priority: 'P4', labels: { team: 'growth' } })
  const alertId = await ingest({ title: 'Refund lag', priority: 'P4', labels: { team: 'payments' } })
  t.match(await finishedRun(room.id, alertId), { status: 'succeeded', actions: [{ type: 'open_command_room', status: 'succeeded' }] })
  t.match(await finishedRun(room.id, other), { status: 'not_matched', conditions: [{ detail: 'label "team" does not match' }] })
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${alertId}/command-room`)).statusCode, 200)
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${other}/command-room`)).statusCode, 404)
  t.equal((await call(manager!, 'POST', `${base}/workflows/${room.id}/disable`)).json().enabled, false)
  const later = await ingest({ title: 'Payout lag', priority: 'P4', labels: { team: 'payments' } })
  await until('the alert’s events dispatched', async () =>
    (
      await db
        .selectFrom('divinux.alertEvents')
        .select('dispatchedAt')
        .where('alertId', '=', later)
        .where('type', '=', 'created')
        .executeTakeFirstOrThrow()
    ).dispatchedAt
      ? true
      : undefined,
  )
  t.notOk(
    (await runsOf(room.id)).some((run) => run.alertId === later),
    'a disabled workflow does not run',
  )
})

t.test('acknowledging and resolving trigger their workflows; source and service conditions apply', async (t) => {
  const acked = await created(`${base}/workflows`, {
    name: 'Tell the room on acknowledgement',
    trigger: 'alert.acknowledged',
    conditions: [{ type: 'source', in: ['generic'] }],
    actions: [{ type: 'notify_chat', chatIntegrationId: chat.id }],
  })
  const alertId = await ingest({ title: 'Inventory sync stuck', service: 'inventory' })
  t.equal((await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)).statusCode, 200)
  const run = await finishedRun(acked.id, alertId)
  t.match(run, { status: 'succeeded', conditions: [{ type: 'source', matched: true }] })
  await until('the acknowledgement post', () =>
    receiver.received.find((entry) => entry.path === '/ops-room' && JSON.stringify(entry.body).includes('Inventory sync stuck')),
  )
})

t.test('a chat that fails for now is tried again; actions done before it are not done twice', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Busy chat',
    trigger: 'alert.created',
    conditions: [{ type: 'service', in: ['billing'] }],
    actions: [
      { type: 'set_priority', priority: 'P1' },
      { type: 'notify_chat', chatIntegrationId: busyChat.id },
    ],
  })
  const alertId = await ingest({ title: 'Invoices late', service: 'billing', priority: 'P3' })
  await until('the refused post', () => receiver.received.find((entry) => entry.path === '/busy'))
  await until('the run waiting for its retry', async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = 'alerting.workflow-run' and state = 'retry'`.execute(
        db,
      )
    ).rows[0]!.n > 0
      ? true
      : undefined,
  )
  await sql`update pgboss.job set start_after = now() where name = 'alerting.workflow-run' and state = 'retry'`.execute(db)
  const run = await finishedRun(flow.id, alertId)
  t.match(run, {
    status: 'succeeded',
    actions: [
      { type: 'set_priority', status: 'succeeded' },
      { type: 'notify_chat', status: 'succeeded' },
    ],
  })
  t.equal(run.actions.length, 2)
  t.equal(receiver.received.filter((entry) => entry.path === '/busy').length, 2)
  const changes = await db
    .selectFrom('divinux.alertEvents')
    .select('type')
    .where('alertId', '=', alertId)
    .where('type', '=', 'priority_changed')
    .execute()
  t.equal(changes.length, 1, 'the priority changed once')
})

t.test('a deploy runs deploy.recorded workflows once, however often it is delivered', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Production deploys',
    trigger: 'deploy.recorded',
    conditions: [
      { type: 'environment', in: ['production'] },
      { type: 'deploy_status', in: ['success', 'failure'] },
    ],
    actions: [
      { type: 'notify_chat', chatIntegrationId: chat.id },
      { type: 'call_webhook', outboundWebhookId: hook.id },
    ],
  })
  const deliveryId = randomUUID()
  const first = await deploy(
    { service: 'api', environment: 'production', version: 'v7', status: 'failure', commit: 'abcdef1234567890' },
    deliveryId,
  )
  t.equal(first.statusCode, 201)
  t.equal((await deploy({ service: 'api', environment: 'production', version: 'v7', status: 'failure' }, deliveryId)).statusCode, 200)
  const staging = (await deploy({ service: 'api', environment: 'staging', status: 'success' })).json().id as string
  const run = await finishedRun(flow.id, first.json().id)
  t.match(run, { status: 'succeeded', actions: [{ type: 'notify_chat' }, { type: 'call_webhook' }] })
  t.match(await finishedRun(flow.id, staging), { status: 'not_matched', conditions: [{ type: 'environment', matched: false }] })
  t.equal((await runsOf(flow.id)).length, 2, 'the repeated delivery started nothing')
  const posted = await until('the deploy post', () =>
    receiver.received.find((entry) => entry.path === '/ops-room' && JSON.stringify(entry.body).includes('[deploy] api v7')),
  )
  t.match(JSON.stringify(posted.body), /production: failure.*Commit: abcdef123456/)
  const delivered = await until('the deploy delivery', () =>
    receiver.received.filter((entry) => entry.path === '/tracker').find((entry) => JSON.stringify(entry.body).includes('deploy.recorded')),
  )
  t.ok(delivered)
  const body = fromTracker(receiver.received.filter((entry) => entry.path === '/tracker').indexOf(delivered))
  t.match(body, { type: 'deploy.recorded', data: { deploy: { service: 'api' }, workflow: { name: 'Production deploys' } } })
})

t.test('a workflow whose target was deleted says so on read, and its run records the failure', async (t) => {
  const doomed = await created(`${base}/chat-integrations`, { name: 'Doomed', kind: 'discord', webhookUrl: `${receiver.url}/doomed` })
  const flow = await created(`${base}/workflows`, {
    name: 'Doomed posts',
    trigger: 'alert.created',
    conditions: [{ type: 'service', in: ['doomed'] }],
    actions: [
      { type: 'notify_chat', chatIntegrationId: doomed.id },
      { type: 'set_priority', priority: 'P5' },
    ],
  })
  t.equal((await call(manager!, 'DELETE', `${base}/chat-integrations/${doomed.id}`)).statusCode, 204)
  t.match((await call(viewer!, 'GET', `${base}/workflows/${flow.id}`)).json().problems, [/^actions\/0\/chatIntegrationId .* deleted/])
  const alertId = await ingest({ title: 'Doomed', service: 'doomed', priority: 'P3' })
  t.match(await finishedRun(flow.id, alertId), {
    status: 'failed',
    actions: [
      { type: 'notify_chat', status: 'failed', detail: 'the chat integration was deleted' },
      { type: 'set_priority', status: 'succeeded' },
    ],
  })
})

t.test('actions that cannot do anything now say why, and the others still run', async (t) => {
  const off = await created(`${base}/chat-integrations`, { name: 'Off room', kind: 'teams', webhookUrl: `${receiver.url}/off` })
  await call(manager!, 'PATCH', `${base}/chat-integrations/${off.id}`, { enabled: false })
  const gone = await created(`${base}/chat-integrations`, { name: 'Gone room', kind: 'discord', webhookUrl: `${receiver.url}/gone` })
  const quiet = await created(`${base}/outbound-webhooks`, { name: 'Quiet', url: `${receiver.url}/quiet`, events: ['alert.created'] })
  await call(manager!, 'PATCH', `${base}/outbound-webhooks/${quiet.id}`, { enabled: false })
  const doomedPolicy = await created(`${base}/escalation-policies`, {
    name: 'Doomed policy',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] }],
  })
  const doomedHook = await created(`${base}/outbound-webhooks`, {
    name: 'Doomed hook',
    url: `${receiver.url}/doomed-hook`,
    events: ['alert.created'],
  })
  const flow = await created(`${base}/workflows`, {
    name: 'Edges',
    trigger: 'alert.created',
    conditions: [{ type: 'service', in: ['edges'] }],
    actions: [
      { type: 'notify_chat', chatIntegrationId: off.id },
      { type: 'notify_chat', chatIntegrationId: gone.id },
      { type: 'call_webhook', outboundWebhookId: quiet.id },
      { type: 'call_webhook', outboundWebhookId: doomedHook.id },
      { type: 'escalate', escalationPolicyId: doomedPolicy.id },
      { type: 'set_priority', priority: 'P4' },
      { type: 'open_command_room' },
      { type: 'open_command_room' },
      { type: 'start_analysis' },
      { type: 'start_analysis' },
    ],
  })
  t.equal((await call(manager!, 'DELETE', `${base}/outbound-webhooks/${doomedHook.id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/escalation-policies/${doomedPolicy.id}`)).statusCode, 204)
  t.same(
    (await call(viewer!, 'GET', `${base}/workflows/${flow.id}`)).json().problems.map((problem: string) => problem.split(' ')[0]),
    ['actions/3/outboundWebhookId', 'actions/4/escalationPolicyId'],
  )
  const alertId = await ingest({ title: 'Edge cases', service: 'edges', priority: 'P4' })
  const run = await finishedRun(flow.id, alertId)
  t.equal(run.status, 'failed')
  t.match(run.actions, [
    { type: 'notify_chat', status: 'failed', detail: 'the chat integration "Off room" is disabled' },
    { type: 'notify_chat', status: 'failed', detail: /^discord answered 404/ },
    { type: 'call_webhook', status: 'failed', detail: 'the outbound webhook "Quiet" is disabled' },
    { type: 'call_webhook', status: 'failed', detail: 'the outbound webhook was deleted' },
    { type: 'escalate', status: 'failed', detail: 'the escalation policy was deleted' },
    { type: 'set_priority', status: 'skipped', detail: 'the alert is P4 already' },
    { type: 'open_command_room', status: 'succeeded' },
    { type: 'open_command_room', status: 'skipped', detail: 'the command room was open already' },
    { type: 'start_analysis', status: 'succeeded' },
    { type: 'start_analysis', status: 'skipped', detail: /already/ },
  ])
})

t.test('escalate starts a policy only for an open alert that is not escalating already', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Escalate on acknowledgement',
    trigger: 'alert.acknowledged',
    conditions: [{ type: 'labels', match: { escalate: 'yes' } }],
    actions: [{ type: 'escalate', escalationPolicyId: policy.id }],
  })
  const twoSteps = await created(`${base}/escalation-policies`, {
    name: 'Two steps',
    steps: [
      { delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] },
      { delayMinutes: 5, targets: [{ type: 'user', id: manager!.userId }] },
    ],
  })
  const twice = await created(`${base}/workflows`, {
    name: 'Escalate twice',
    trigger: 'alert.created',
    conditions: [{ type: 'labels', match: { escalate: 'twice' } }],
    actions: [
      { type: 'escalate', escalationPolicyId: twoSteps.id },
      { type: 'escalate', escalationPolicyId: twoSteps.id },
    ],
  })
  const acknowledged = await ingest({ title: 'Acknowledged early', labels: { escalate: 'yes' } })
  t.equal((await call(ada!, 'POST', `${base}/alerts/${acknowledged}/acknowledge`)).statusCode, 200)
  t.match(await finishedRun(flow.id, acknowledged), {
    status: 'succeeded',
    actions: [{ type: 'escalate', status: 'skipped', detail: 'the alert is acknowledged' }],
  })
  const open = await ingest({ title: 'Escalate me twice', labels: { escalate: 'twice' } })
  t.match(await finishedRun(twice.id, open), {
    actions: [
      { status: 'succeeded', detail: 'escalating with "Two steps"' },
      { status: 'skipped', detail: "the alert's escalation is active already" },
    ],
  })
})

t.test('workflows are listed by trigger and changed in part', async (t) => {
  const deploys = (await call(viewer!, 'GET', `${base}/workflows?trigger=deploy.recorded`)).json()
  t.match(deploys, { meta: { total: 1 }, data: [{ name: 'Production deploys' }] })
  const flow = deploys.data[0].id as string
  const changed = await call(manager!, 'PATCH', `${base}/workflows/${flow}`, {
    description: null,
    conditions: [{ type: 'service', in: ['api'] }],
    actions: [{ type: 'notify_chat', chatIntegrationId: chat.id }],
    enabled: false,
  })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { description: null, enabled: false, conditions: [{ type: 'service' }], actions: { length: 1 } })
  t.equal((await call(manager!, 'PATCH', `${base}/workflows/${flow}`, { name: 'checkout TRIAGE' })).statusCode, 409)
  t.equal((await call(manager!, 'PATCH', `${base}/workflows/${randomUUID()}`, { enabled: true })).statusCode, 404)
})

t.test('workflows are changed, enabled and deleted with an audit entry each', async (t) => {
  const renamed = await call(manager!, 'PATCH', `${base}/workflows/${triage}`, {
    name: 'Checkout first response',
    description: 'P3/P4 after deploys',
  })
  t.match(renamed.json(), { name: 'Checkout first response', description: 'P3/P4 after deploys' })
  t.equal((await call(manager!, 'POST', `${base}/workflows/${triage}/disable`)).json().enabled, false)
  t.equal((await call(manager!, 'POST', `${base}/workflows/${triage}/disable`)).json().enabled, false, 'disabling twice is fine')
  t.equal((await call(manager!, 'POST', `${base}/workflows/${triage}/enable`)).json().enabled, true)
  t.equal((await call(viewer!, 'DELETE', `${base}/workflows/${triage}`)).statusCode, 403)
  t.equal((await call(manager!, 'DELETE', `${base}/workflows/${triage}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/workflows/${triage}`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${base}/workflows/${triage}/runs`)).statusCode, 404)
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', triage).orderBy('createdAt').execute()
  t.same(
    audit.map((row) => row.action),
    ['workflow.created', 'workflow.updated', 'workflow.disabled', 'workflow.enabled', 'workflow.deleted'],
  )
})
