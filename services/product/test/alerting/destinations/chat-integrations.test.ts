import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { startSlackServer, startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const slack = await startSlackServer(t)
const receiver = await startWebhookReceiver(t, (path) =>
  path.startsWith('/discord/gone') ? { status: 404, body: '{"message": "Unknown Webhook", "code": 10015}' } : { status: 200, body: 'ok' },
)
const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: true, slackApiUrl: slack.apiUrl }, productLinkBase: 'https://product.example' },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'chatops', { manager: 'manager', viewer: 'viewer' })
const [manager, viewer, stranger] = ['manager', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const ids: Record<string, string> = {}

t.test('integrations for Slack, Teams and Discord webhooks and a Slack bot; credentials are never answered', async (t) => {
  const cases = [
    { name: 'Slack incidents', kind: 'slack', webhookUrl: `${receiver.url}/services/T000/B000/secret-slack` },
    { name: 'Teams ops', kind: 'teams', webhookUrl: `${receiver.url}/teams/secret-teams` },
    { name: 'Discord ops', kind: 'discord', webhookUrl: `${receiver.url}/discord/secret-discord` },
    { name: 'Discord gone', kind: 'discord', webhookUrl: `${receiver.url}/discord/gone` },
    { name: 'Slack bot', kind: 'slack_bot', botToken: slack.botToken, channel: 'C0123' },
  ]
  for (const payload of cases) {
    const response = await call(manager!, 'POST', `${base}/chat-integrations`, payload)
    t.equal(response.statusCode, 201, payload.name)
    ids[payload.name] = response.json().id
    t.notMatch(response.body, /secret|xoxb/, 'no credential in the answer')
  }
  t.match((await call(viewer!, 'GET', `${base}/chat-integrations/${ids['Slack bot']}`)).json(), { kind: 'slack_bot', target: '#C0123' })
  t.equal((await call(viewer!, 'GET', `${base}/chat-integrations`)).json().meta.total, 5)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/chat-integrations/${ids['Slack bot']}`)).statusCode, 404)

  const refused: Array<[object, number, RegExp]> = [
    [{ name: 'X', kind: 'slack' }, 400, /webhookUrl is required/],
    [{ name: 'X', kind: 'slack_bot', channel: 'C1' }, 400, /botToken is required/],
    [{ name: 'X', kind: 'slack_bot', botToken: 'not-a-token', channel: 'C1' }, 400, /botToken/],
    [{ name: 'X', kind: 'teams', webhookUrl: 'ftp://example.com/x' }, 400, /webhookUrl must be an http or https URL/],
    [{ name: 'slack INCIDENTS', kind: 'slack', webhookUrl: `${receiver.url}/x` }, 409, /exists/],
  ]
  for (const [payload, status, message] of refused) {
    const response = await call(manager!, 'POST', `${base}/chat-integrations`, payload)
    t.equal(response.statusCode, status)
    t.match(response.json().message, message)
  }
  t.equal((await call(viewer!, 'POST', `${base}/chat-integrations`, cases[0]!)).statusCode, 403)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('entityId', '=', ids['Slack incidents']!)
    .executeTakeFirstOrThrow()
  t.notMatch(JSON.stringify(audit.changes), /secret-slack/, 'nor in the audit log')
})

t.test('a test message reaches each service in its own format; a refusal is a 502 with the service’s answer', async (t) => {
  for (const name of ['Slack incidents', 'Teams ops', 'Discord ops', 'Slack bot']) {
    const response = await call(manager!, 'POST', `${base}/chat-integrations/${ids[name]}/test`)
    t.same(response.json(), { delivered: true }, name)
  }
  const byPath = (fragment: string) => receiver.received.find((entry) => entry.path.includes(fragment))!.body as Record<string, unknown>
  t.match(byPath('secret-slack'), { text: /^\[P5\] Test message from Incident Platform/, blocks: [{ type: 'section' }] })
  t.match(byPath('secret-teams'), {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: { type: 'AdaptiveCard' } }],
  })
  t.match(byPath('secret-discord'), { content: /^\[P5\] Test message/, embeds: [{ color: 0x98a2b3 }] })
  t.match(slack.posts[0], { channel: 'C0123', text: /Test message from Incident Platform \(Slack bot\)/ })

  const gone = await call(manager!, 'POST', `${base}/chat-integrations/${ids['Discord gone']}/test`)
  t.equal(gone.statusCode, 502)
  t.match(gone.json().message, /discord answered 404: \{"message": "Unknown Webhook"/)
  await call(manager!, 'PATCH', `${base}/chat-integrations/${ids['Slack bot']}`, { channel: 'C-MISSING' })
  t.match((await call(manager!, 'POST', `${base}/chat-integrations/${ids['Slack bot']}/test`)).json().message, /slack: channel_not_found/)
  await call(manager!, 'PATCH', `${base}/chat-integrations/${ids['Slack bot']}`, { channel: 'C0123' })
})

t.test('an escalation step posts to its chat integrations; a refused post is a failed attempt', async (t) => {
  const policy = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Chat first',
    steps: [
      {
        delayMinutes: 5,
        targets: [
          { type: 'chat', id: ids['Slack incidents'] },
          { type: 'chat', id: ids['Slack bot'] },
          { type: 'chat', id: ids['Discord gone'] },
        ],
      },
    ],
  })
  t.equal(policy.statusCode, 201)
  const unknown = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'X',
    steps: [{ delayMinutes: 5, targets: [{ type: 'chat', id: randomUUID() }] }],
  })
  t.match(unknown.json().message, /steps\/0\/targets\/0\/id is not a chat integration/)
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.json().id })).json()
  const ingested = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Orders stuck', service: 'orders', priority: 'P4' }),
  })
  const alertId = ingested.json().alertId
  const settled = await until('the chat attempts to settle', async () => {
    const data = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data as Array<{
      channel: string
      status: string
      target: { id: string }
      error: string | null
    }>
    return data.length === 3 && data.every((attempt) => attempt.status !== 'queued') && data
  })
  const outcome = Object.fromEntries(
    settled.map((attempt) => [
      Object.keys(ids).find((name) => ids[name] === attempt.target.id),
      [attempt.channel, attempt.status, attempt.error],
    ]),
  )
  t.same(outcome, {
    'Slack incidents': ['chat', 'sent', null],
    'Slack bot': ['chat', 'sent', null],
    'Discord gone': ['chat', 'failed', 'discord answered 404: {"message": "Unknown Webhook", "code": 10015}'],
  })
  const posted = receiver.received.filter((entry) => entry.path.includes('secret-slack')).at(-1)!.body as {
    text: string
    blocks: Array<{ text?: { text: string } }>
  }
  t.match(posted.text, /^\[P4\] Orders stuck \(Service: orders · Source: generic · Status: open\)/)
  t.match(
    posted.blocks[0]!.text!.text,
    new RegExp(`<https://product\\.example/api/v1/organizations/${orgId}/alerts/${alertId}\\|\\[P4\\] Orders stuck>`),
  )

  // A P2 opens an incident before it pages (correlation goes first): the page names it.
  await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Ledger writes failing', service: 'ledger', priority: 'P2' }),
  })
  const paged = await until('the P2’s page in Slack', () =>
    receiver.received
      .filter((entry) => entry.path.includes('secret-slack'))
      .map((entry) => (entry.body as { text: string }).text)
      .find((text) => text.startsWith('[P2] Ledger writes failing')),
  )
  t.match(paged, /^\[P2\] Ledger writes failing \(Incident: INC-\d+ · Service: ledger · /)
})

t.test('a chat message shows the analysis once it is done', async (t) => {
  const policy = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'People, then chat',
    steps: [
      { delayMinutes: 5, targets: [{ type: 'user', id: manager!.userId }] },
      { delayMinutes: 5, targets: [{ type: 'chat', id: ids['Slack incidents'] }] },
    ],
  })
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Critical', escalationPolicyId: policy.json().id })).json()
  const ingested = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Checkout 500s', service: 'checkout', priority: 'P1' }),
  })
  const alertId = ingested.json().alertId
  // P1 alerts are analysed at once (the built-in offline analyzer here).
  await until('the analysis', async () => {
    const row = await db.selectFrom('divinux.analyses').select('status').where('incidentId', '=', alertId).executeTakeFirst()
    return row?.status === 'completed'
  })
  // The first step pages once correlation has placed the alert; its job for the second step then waits.
  await until('the first step to have paged', async () => {
    const escalation = await db
      .selectFrom('divinux.alertEscalations')
      .select(['state', 'step'])
      .where('alertId', '=', alertId)
      .executeTakeFirst()
    return escalation?.state === 'active' && escalation.step === 1
  })
  const before = receiver.received.length
  await sql`update pgboss.job set start_after = now() where name = 'alerting.escalation-step' and state in ('created', 'retry')`.execute(db)
  const message = await until('the second step’s post', () =>
    receiver.received.slice(before).find((entry) => entry.path.includes('secret-slack')),
  )
  const blocks = (message.body as { blocks: Array<{ text?: { text: string } }> }).blocks
  t.match(blocks[1]!.text!.text, /^\*Analysis:\* /)
})

t.test('a chat paged before the analysis was done gets it when it completes', async (t) => {
  const policy = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Teams first',
    steps: [{ delayMinutes: 5, targets: [{ type: 'chat', id: ids['Teams ops'] }] }],
  })
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Payments', escalationPolicyId: policy.json().id })).json()
  const before = receiver.received.length
  const ingested = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Payments timing out', service: 'payments', priority: 'P3' }),
  })
  const alertId = ingested.json().alertId
  const paged = await until('the page', () => receiver.received.slice(before).find((entry) => entry.path.includes('secret-teams')))
  t.notMatch(JSON.stringify(paged.body), /Analysis: /, 'a P3 alert is not analysed unless asked')
  // Someone asks for an analysis after the page went out.
  const requested = await app.inject({
    method: 'POST',
    url: `${base}/insights`,
    headers: person('owner').headers,
    payload: { incidentId: alertId, sourceProduct: 'alerting' },
  })
  t.equal(requested.statusCode, 202, requested.body)
  const followUp = await until('the analysis posted to the paged chat', () =>
    receiver.received
      .slice(before)
      .find((entry) => entry.path.includes('secret-teams') && JSON.stringify(entry.body).includes('Analysis done')),
  )
  t.match(
    JSON.stringify(followUp.body),
    /\[P3\] Payments timing out.*Analysis: P3 .* failing since \d\d:\d\d UTC: Payments timing out\\n.* · no runbook matched/,
    'the on-call agent’s two lines come first',
  )
})

t.test('a deleted integration leaves the policies that named it', async (t) => {
  t.equal((await call(manager!, 'DELETE', `${base}/chat-integrations/${ids['Discord gone']}`)).statusCode, 204)
  const policies = (await call(viewer!, 'GET', `${base}/escalation-policies?q=chat`)).json().data
  const chatFirst = (await call(viewer!, 'GET', `${base}/escalation-policies/${policies[0].id}`)).json()
  t.same(
    chatFirst.steps[0].targets.map((target: { id: string }) => target.id),
    [ids['Slack incidents'], ids['Slack bot']],
  )
})

t.test('changes are checked like creations; a disabled integration fails its attempts with the reason', async (t) => {
  const slackId = ids['Slack incidents']!
  const botId = ids['Slack bot']!
  const cases: Array<[string, object, number, RegExp]> = [
    [botId, { webhookUrl: `${receiver.url}/x` }, 400, /webhookUrl is not used by slack_bot/],
    [slackId, { botToken: slack.botToken }, 400, /botToken is not used by slack/],
    [slackId, { channel: 'C1' }, 400, /channel is not used by slack/],
    [slackId, { webhookUrl: 'gopher://example.com/x' }, 400, /webhookUrl must be an http or https URL/],
    [slackId, { name: 'teams OPS' }, 409, /exists/],
  ]
  for (const [id, payload, status, message] of cases) {
    const response = await call(manager!, 'PATCH', `${base}/chat-integrations/${id}`, payload)
    t.equal(response.statusCode, status)
    t.match(response.json().message, message)
  }
  const refusedCreations: Array<[object, RegExp]> = [
    [{ name: 'X', kind: 'slack_bot', botToken: slack.botToken }, /channel is required/],
    [{ name: 'X', kind: 'slack_bot', botToken: slack.botToken, channel: 'C1', webhookUrl: `${receiver.url}/x` }, /webhookUrl is not used/],
    [{ name: 'X', kind: 'discord', webhookUrl: `${receiver.url}/x`, channel: 'C1' }, /channel is not used by discord/],
  ]
  for (const [payload, message] of refusedCreations)
    t.match((await call(manager!, 'POST', `${base}/chat-integrations`, payload)).json().message, message)
  t.equal((await call(viewer!, 'GET', `${base}/chat-integrations/not-a-uuid`)).statusCode, 404)

  const renamed = await call(manager!, 'PATCH', `${base}/chat-integrations/${slackId}`, {
    name: 'Slack war room',
    webhookUrl: `${receiver.url}/services/T000/B000/secret-slack-2`,
    enabled: false,
  })
  t.match(renamed.json(), { name: 'Slack war room', enabled: false })
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('entityId', '=', slackId)
    .where('action', '=', 'chat_integration.updated')
    .executeTakeFirstOrThrow()
  t.match(audit.changes, { after: { name: 'Slack war room', enabled: false, credential: 'replaced' } })
  t.notMatch(JSON.stringify(audit.changes), /secret-slack/)

  const policy = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Disabled chat',
    steps: [{ delayMinutes: 5, targets: [{ type: 'chat', id: slackId }] }],
  })
  const config = (
    await call(manager!, 'POST', `${base}/webhooks`, { name: 'To a disabled chat', escalationPolicyId: policy.json().id })
  ).json()
  const alertId = (
    await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'Nobody listens' }),
    })
  ).json().alertId
  const failed = await until('the attempt to fail', async () => {
    const data = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data
    return data[0]?.status === 'failed' && data[0]
  })
  t.equal(failed.error, 'the chat integration is disabled')
  await call(manager!, 'PATCH', `${base}/chat-integrations/${slackId}`, { enabled: true })
})
