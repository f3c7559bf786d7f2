import { sql } from 'kysely'
import t from 'tap'
import { startSlackServer, startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// What incident workflows do beyond paging and tickets (issue 56; decision 0031): open the
// incident's Slack channel and post to it or to a chat, post a status update drafted from a
// template, draft an RCA; and wait before acting, judging their conditions when the wait ends.
// Slack is a loopback server driven by the real @slack/web-api; delays are moved by the test
// through pg-boss's own start_after, never waited out.

const slack = await startSlackServer(t)
const receiver = await startWebhookReceiver(t, () => ({ status: 200, body: 'ok' }))
const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: true, slackApiUrl: slack.apiUrl }, productLinkBase: 'https://product.example' },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'flowactions', { manager: 'manager', ada: 'responder', viewer: 'viewer' })
const [manager, ada, viewer] = ['manager', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const created = async (url: string, payload: object, who: Who = manager!) => {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json() as { id: string; number: number }
}

await created(`${base}/incident-fields`, { key: 'impact', name: 'Customer impact', kind: 'select', options: ['none', 'some', 'all'] })
await created(`${base}/incident-types`, { key: 'security', name: 'Security', fields: [{ field: 'impact', required: 'declare' }] })
// A Slack app that opens no channel of its own accord, and a plain incoming webhook.
const slackApp = await created(`${base}/chat-integrations`, {
  name: 'Slack app',
  kind: 'slack_bot',
  botToken: slack.botToken,
  channel: 'C0INCIDENTS',
  signingSecret: slack.signingSecret,
})
const teams = await created(`${base}/chat-integrations`, { name: 'Teams', kind: 'teams', webhookUrl: `${receiver.url}/teams` })

type Run = {
  status: string
  incidentId: string | null
  startsAt: string | null
  occurredAt: string
  conditions: Array<{ type: string; matched: boolean; detail: string }>
  actions: Array<{ type: string; status: string; detail: string }>
}
const runsOf = async (workflowId: string) => (await call(viewer!, 'GET', `${base}/workflows/${workflowId}/runs`)).json().data as Run[]
/**
 * Runs waiting for a retry go at once once every channel asked for is open: the test moves their
 * time, it does not wait. Hurried while a channel is still being opened, a run would spend its
 * tries before the channel is there, which no real run's backoff does.
 */
const hurryRetries = () =>
  sql`update pgboss.job set start_after = now() where name = 'alerting.workflow-run' and state = 'retry'
      and not exists (select 1 from divinux.incident_channel_requests requested
        where not exists (select 1 from divinux.incident_chat_channels opened
          where opened.incident_id = requested.incident_id and opened.integration_id = requested.integration_id))`.execute(db)
const finishedRun = (workflowId: string, incidentId: string) =>
  until(`a finished run of ${workflowId}`, async () => {
    await hurryRetries()
    return (await runsOf(workflowId)).find((run) => run.incidentId === incidentId && !['queued', 'running'].includes(run.status))
  })

t.test('templates, channels and chat are checked when a workflow is saved', async (t) => {
  const refusals: Array<[object, RegExp]> = [
    [
      { trigger: 'incident.declared', actions: [{ type: 'post_status_update', body: 'We look into {{incident.colour}}' }] },
      /actions\/0\/body names \{\{incident.colour\}\}, which is none of incident.reference/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'create_rca', title: '{{#fields.impact}}x{{/fields.impact}}' }] },
      /actions\/0\/title uses \{\{#fields.impact\}\}: only plain \{\{name\}\} variables are taken/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'post_status_update', body: 'Made by {{constructor}}' }] },
      /actions\/0\/body names \{\{constructor\}\}, which is none of/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'post_status_update', body: 'Broken {{incident.title' }] },
      /actions\/0\/body is not a valid template: Unclosed tag/,
    ],
    [
      { trigger: 'alert.created', actions: [{ type: 'notify_chat', chatIntegrationId: teams.id, channel: 'incident' }] },
      /actions\/0\/channel applies to incident triggers, not alert.created/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'create_incident_channel', chatIntegrationId: teams.id }] },
      /actions\/0\/chatIntegrationId is not a Slack app with a signing secret/,
    ],
    [
      { trigger: 'incident.declared', actions: [{ type: 'notify_chat', chatIntegrationId: teams.id, channel: 'incident' }] },
      /actions\/0\/chatIntegrationId is not a Slack app with a signing secret/,
    ],
    [{ trigger: 'alert.created', actions: [{ type: 'create_rca' }] }, /actions\/0\/type create_rca acts on incident triggers/],
    [
      { trigger: 'incident.declared', delayMinutes: 1_441, actions: [{ type: 'create_rca' }] },
      /delayMinutes must be <= 1440|body\/delayMinutes/,
    ],
  ]
  for (const [payload, message] of refusals) {
    const refused = await call(manager!, 'POST', `${base}/workflows`, { name: 'Refused', ...payload })
    t.equal(refused.statusCode, 400, JSON.stringify(payload))
    t.match(refused.json().message, message)
  }
  t.equal((await call(viewer!, 'GET', `${base}/workflows`)).json().data.length, 0, 'nothing was saved')
})

t.test('a declared Security incident gets its channel, a post there and in Teams, a drafted status update and an RCA', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Security room',
    trigger: 'incident.declared',
    conditions: [{ type: 'incident_type', in: ['security'] }],
    actions: [
      { type: 'create_incident_channel', chatIntegrationId: slackApp.id },
      {
        type: 'notify_chat',
        chatIntegrationId: slackApp.id,
        channel: 'incident',
        message: '{{incident.reference}} is a {{incident.type}} incident: impact {{fields.impact}}',
      },
      { type: 'notify_chat', chatIntegrationId: teams.id, message: 'Heads up from {{workflow.name}}' },
      {
        type: 'post_status_update',
        body: 'We are investigating {{incident.title}} ({{incident.severity}}).',
        title: 'Security: {{incident.title}}',
      },
      { type: 'create_rca', title: 'RCA {{incident.reference}}: {{incident.title}}' },
    ],
  })
  t.same((await call(viewer!, 'GET', `${base}/workflows/${flow.id}`)).json().delayMinutes, 0)
  const incident = await created(
    `${base}/incidents`,
    { title: 'Token leaked', severity: 'SEV2', type: 'security', fields: { impact: 'some' } },
    ada!,
  )
  const reference = `INC-${incident.number}`
  const run = await finishedRun(flow.id, incident.id)
  t.match(run, {
    status: 'succeeded',
    actions: [
      { type: 'create_incident_channel', status: 'succeeded', detail: `"Slack app" opens ${reference}'s channel within seconds` },
      { type: 'notify_chat', status: 'succeeded', detail: /^posted to #inc-\d+-token-leaked in "Slack app"$/ },
      { type: 'notify_chat', status: 'succeeded', detail: `posted ${reference} to "Teams"` },
      { type: 'post_status_update', status: 'succeeded', detail: /hold it as a draft$/ },
      { type: 'create_rca', status: 'succeeded', detail: new RegExp(`"RCA ${reference}: Token leaked" drafted for ${reference}$`) },
    ],
  })

  const channel = slack.channels.find((made) => made.name.startsWith(`inc-${incident.number}-token-leaked`))
  t.ok(channel, 'the Slack app opened the incident’s channel though it opens none for every incident')
  const inRoom = slack.posts.find((post) => post.channel === channel!.id && post.text.includes('is a Security incident'))
  t.match(inRoom?.text, `${reference} is a Security incident: impact some`)
  t.match(JSON.stringify(inRoom?.blocks), `[SEV2] ${reference}: Token leaked`)

  const teamsPost = receiver.received.find((entry) => entry.path === '/teams')
  const card = (teamsPost?.body as { attachments: Array<{ content: { body: Array<{ text: string }> } }> }).attachments[0]!.content
  t.same(
    card.body.slice(0, 2).map((block) => block.text),
    ['Heads up from Security room', `[SEV2] ${reference}: Token leaked`],
  )

  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline`)).json().data as Array<{
    kind: string
    body: string | null
    authorId: string | null
    data: { statusPages?: { status: string; publish: boolean; name?: string } }
  }>
  const update = timeline.find((entry) => entry.kind === 'status_update')
  t.match(update, {
    body: 'We are investigating Token leaked (SEV2).',
    authorId: null,
    data: { statusPages: { status: 'investigating', publish: false, name: 'Security: Token leaked' } },
  })

  const links = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/links`)).json() as {
    rcaDocuments: Array<{ id: string; title: string; status: string }>
  }
  t.match(links.rcaDocuments, [{ title: `RCA ${reference}: Token leaked`, status: 'draft' }])

  // Declared again through a second workflow run (a role change does not re-run declared): the RCA is not made twice.
  const again = await created(`${base}/workflows`, {
    name: 'RCA again',
    trigger: 'incident.field_changed',
    actions: [{ type: 'create_rca' }, { type: 'create_incident_channel', chatIntegrationId: slackApp.id }],
  })
  t.equal((await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { fields: { impact: 'all' } })).statusCode, 200)
  t.match(await finishedRun(again.id, incident.id), {
    status: 'succeeded',
    actions: [
      { type: 'create_rca', status: 'skipped', detail: /is linked to INC-\d+ already$/ },
      { type: 'create_incident_channel', status: 'skipped', detail: /has its channel #inc-/ },
    ],
  })
  t.equal((await call(viewer!, 'GET', `${base}/incidents/${incident.id}/links`)).json().rcaDocuments.length, 1)

  const dry = await call(manager!, 'POST', `${base}/workflows/${flow.id}/dry-run`, { incidentId: incident.id })
  t.match(dry.json().actions, [
    { type: 'create_incident_channel', wouldFail: false, detail: /^nothing: the incident has its channel #inc-/ },
    { type: 'notify_chat', wouldFail: false, detail: /^post to #inc-\d+-token-leaked in "Slack app"$/ },
    { type: 'notify_chat', wouldFail: false, detail: 'post to "Teams"' },
    { type: 'post_status_update', detail: /as a draft/ },
    { type: 'create_rca', detail: /unless one is linked already/ },
  ])
})

t.test('a delayed workflow waits, then judges its conditions on the incident as it is', async (t) => {
  const flow = await created(`${base}/workflows`, {
    name: 'Still SEV1 after 30 minutes',
    trigger: 'incident.declared',
    delayMinutes: 30,
    conditions: [{ type: 'severity', in: ['SEV1'] }],
    actions: [{ type: 'notify_chat', chatIntegrationId: teams.id, message: '{{incident.reference}} is still SEV1' }],
  })
  const calmed = await created(`${base}/incidents`, { title: 'Checkout down', severity: 'SEV1' }, ada!)
  const lasting = await created(`${base}/incidents`, { title: 'Search down', severity: 'SEV1' }, ada!)
  const waiting = await until('two runs waiting out the delay', async () => {
    const runs = (await runsOf(flow.id)).filter((run) => run.status === 'queued')
    return runs.length === 2 ? runs : undefined
  })
  for (const run of waiting)
    t.equal(Date.parse(run.startsAt!) - Date.parse(run.occurredAt), 30 * 60_000, 'it starts 30 minutes after the declaration')
  const jobs = await sql<{ startAfter: Date }>`
    select start_after as "startAfter" from pgboss.job where name = 'alerting.workflow-run' and state = 'created'`.execute(db)
  t.equal(jobs.rows.length, 2, 'pg-boss holds both jobs until then')

  t.equal((await call(ada!, 'PATCH', `${base}/incidents/${calmed.id}`, { severity: 'SEV3' })).statusCode, 200)
  const postsBefore = receiver.received.filter((entry) => entry.path === '/teams').length
  await sql`update pgboss.job set start_after = now() where name = 'alerting.workflow-run' and state = 'created'`.execute(db)
  const [calmedRun, lastingRun] = [await finishedRun(flow.id, calmed.id), await finishedRun(flow.id, lasting.id)]
  t.match(calmedRun, {
    status: 'not_matched',
    conditions: [{ type: 'severity', matched: false, detail: /severity "SEV3" is not one of "SEV1"/ }],
  })
  t.match(lastingRun, { status: 'succeeded', actions: [{ type: 'notify_chat', status: 'succeeded' }] })
  const posts = receiver.received.filter((entry) => entry.path === '/teams').slice(postsBefore)
  t.equal(posts.length, 1)
  t.match(posts[0]!.raw, `INC-${lasting.number} is still SEV1`)

  // Disabled while a run waits: the run does not act.
  const third = await created(`${base}/incidents`, { title: 'Login down', severity: 'SEV1' }, ada!)
  await until('the third run waiting', async () => (await runsOf(flow.id)).find((run) => run.incidentId === third.id))
  t.equal((await call(manager!, 'POST', `${base}/workflows/${flow.id}/disable`)).statusCode, 200)
  await sql`update pgboss.job set start_after = now() where name = 'alerting.workflow-run' and state = 'created'`.execute(db)
  t.match(await finishedRun(flow.id, third.id), {
    status: 'not_matched',
    conditions: [{ type: 'enabled', matched: false, detail: 'the workflow was disabled while the run waited out its delay' }],
    actions: [],
  })
})
