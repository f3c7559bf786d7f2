import { randomBytes, randomUUID } from 'node:crypto'
import t from 'tap'
import { DEFAULT_SYNTHETICS_CONFIG } from '@svc/config'
import { startJiraServer, startLinearServer, startSlackServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Issue 56's end to end (decision 0031): an organization defines a Security type with a required
// field and a workflow that pages the security policy and opens a Jira ticket on declare.
// Declaring one, through the API and through Slack, does exactly that; resolving without the
// required field is refused naming it; the ticket's status change in Jira comes back to its
// follow-up. Jira is a loopback server speaking its REST API to the real jira.js SDK, and sending
// its webhook signed as Jira Cloud does.

const jira = await startJiraServer(t)
const linear = await startLinearServer(t)
const slack = await startSlackServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true, slackApiUrl: slack.apiUrl },
    productLinkBase: 'https://product.example',
    synthetics: { ...DEFAULT_SYNTHETICS_CONFIG, secretsKey: randomBytes(32).toString('base64') },
  },
})
const { app } = service
// Jira and Slack post to us over HTTP.
const address = await app.listen({ host: '127.0.0.1', port: 0 })
const local = (url: string) => `${address}${new URL(url).pathname}`
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'secops', {
  manager: 'manager',
  ada: 'responder',
  sam: 'responder',
  viewer: 'viewer',
})
const [manager, ada, sam, viewer, stranger] = ['manager', 'ada', 'sam', 'viewer', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const created = async (url: string, payload: object, who: Who = manager!) => {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

type FollowUp = {
  id: string
  title: string
  status: string
  syncStatus: string
  syncError: string | null
  ticket: { key: string; url: string; status: string } | null
}
const followUpsOf = async (incidentId: string) =>
  (await call(viewer!, 'GET', `${base}/incidents/${incidentId}/follow-ups`)).json().data as FollowUp[]
const syncedTicket = (incidentId: string) =>
  until('the follow-up’s ticket', async () => (await followUpsOf(incidentId)).find((followUp) => followUp.syncStatus === 'synced'))

let tracker: { id: string; webhookUrl: string; webhookSecret: string }

t.test('a Jira tracker is connected; its credential is sealed and never answered', async (t) => {
  const refused = await call(manager!, 'POST', `${base}/trackers`, { name: 'Jira', kind: 'jira', siteUrl: jira.url })
  t.equal(refused.statusCode, 400)
  t.equal(
    (
      await call(ada!, 'POST', `${base}/trackers`, {
        name: 'Jira',
        kind: 'linear',
        apiKey: 'lin_api_x',
        teamId: 'T',
        webhookSecret: 'whsecret1',
      })
    ).statusCode,
    403,
  )
  tracker = await created(`${base}/trackers`, {
    name: 'Jira',
    kind: 'jira',
    siteUrl: jira.url,
    accountEmail: jira.email,
    apiToken: jira.apiToken,
    projectKey: 'SEC',
  })
  t.match(tracker, {
    kind: 'jira',
    project: 'SEC',
    issueType: 'Task',
    webhookUrl: `https://product.example/api/v1/trackers/${tracker.id}/events`,
  })
  t.ok(tracker.webhookSecret.length >= 20, 'a webhook secret is made and shown once')
  const read = await call(viewer!, 'GET', `${base}/trackers/${tracker.id}`)
  t.notMatch(read.body, jira.apiToken)
  t.notMatch(read.body, tracker.webhookSecret)
  const stored = await app.database.db
    .selectFrom('divinux.trackerIntegrations')
    .select(['credential'])
    .where('id', '=', tracker.id)
    .executeTakeFirstOrThrow()
  t.notMatch(stored.credential.toString('latin1'), jira.apiToken, 'sealed at rest')
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/trackers/${tracker.id}`)).statusCode, 404)
  // The admin registers Jira's webhook for issue updates with the URL and secret the tracker answered.
  jira.registerWebhook(local(tracker.webhookUrl), tracker.webhookSecret)
})

t.test('declaring a Security incident pages the security policy and opens a Jira ticket; its status comes back', async (t) => {
  await created(`${base}/incident-fields`, { key: 'impact', name: 'Customer impact', kind: 'select', options: ['none', 'some', 'all'] })
  await created(`${base}/incident-fields`, { key: 'root_cause', name: 'Root cause', kind: 'text' })
  await created(`${base}/incident-types`, {
    key: 'security',
    name: 'Security',
    fields: [
      { field: 'impact', required: 'declare' },
      { field: 'root_cause', required: 'resolve' },
    ],
  })
  const policy = await created(`${base}/escalation-policies`, {
    name: 'Security on call',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: sam!.userId }] }],
  })
  const workflow = await created(`${base}/workflows`, {
    name: 'Security response',
    trigger: 'incident.declared',
    conditions: [{ type: 'incident_type', in: ['security'] }],
    actions: [
      { type: 'request_responders', targets: [{ type: 'escalation_policy', id: policy.id }] },
      { type: 'create_ticket', trackerId: tracker.id },
    ],
  })

  const missing = await call(ada!, 'POST', `${base}/incidents`, { title: 'Token leaked', severity: 'SEV2', type: 'security' })
  t.equal(missing.statusCode, 400)
  t.match(missing.json().message, 'fields/impact is required to declare a Security incident')
  const incident = await created(
    `${base}/incidents`,
    { title: 'Token leaked', severity: 'SEV2', type: 'security', fields: { impact: 'some' } },
    ada!,
  )

  const run = await until('the workflow’s run', async () => {
    const runs = (await call(viewer!, 'GET', `${base}/workflows/${workflow.id}/runs`)).json().data as Array<{
      incidentId: string
      status: string
      actions: unknown[]
    }>
    return runs.find((candidate) => candidate.incidentId === incident.id && candidate.status === 'succeeded')
  })
  t.match(run.actions, [
    { type: 'request_responders', status: 'succeeded' },
    { type: 'create_ticket', status: 'succeeded' },
  ])
  const requests = await until('the security policy paged', async () => {
    const data = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/responder-requests`)).json().data as Array<{
      paged: Array<{ email: string }>
    }>
    return data[0]?.paged.length ? data : undefined
  })
  t.equal(requests[0]!.paged[0]!.email, sam!.email, 'the policy’s on-call was paged')

  const followUp = await syncedTicket(incident.id)
  t.match(followUp, {
    title: `INC-${incident.number}: Token leaked`,
    status: 'open',
    ticket: { key: 'SEC-1', url: `${jira.url}/browse/SEC-1`, status: 'To Do' },
  })
  t.match(jira.issues[0], { key: 'SEC-1', project: 'SEC', issueType: 'Task', summary: `INC-${incident.number}: Token leaked` })
  t.match(JSON.stringify(jira.issues[0]!.description), `Follow-up of INC-${incident.number}: Token leaked`)

  const refused = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'resolved' })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, 'fields/root_cause is required to resolve a Security incident: set "Root cause" (root_cause)')

  t.equal(await jira.transition('SEC-1', 'In Progress', 'indeterminate'), 204)
  t.match((await followUpsOf(incident.id))[0], { status: 'open', ticket: { status: 'In Progress' } })
  t.equal(await jira.transition('SEC-1', 'Done', 'done'), 204)
  t.match((await followUpsOf(incident.id))[0], { status: 'done', ticket: { status: 'Done' } }, 'done in Jira, done here')
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline?limit=100`)).json().data as Array<{
    kind: string
    data: Record<string, unknown>
  }>
  t.match(
    timeline.filter((entry) => entry.kind === 'follow_up_updated').map((entry) => entry.data),
    [
      { ticketStatus: 'Done', status: 'done', via: 'jira' },
      { ticketStatus: 'In Progress', status: 'open' },
      { ticket: 'SEC-1', status: 'To Do' },
    ],
  )

  const resolved = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, {
    status: 'resolved',
    fields: { root_cause: 'A token in a build log' },
  })
  t.equal(resolved.statusCode, 200, resolved.body)
})

t.test('/incident declare in Slack does the same', async (t) => {
  slack.addUser('U_ADA', ada!.email)
  const integration = await created(`${base}/chat-integrations`, {
    name: 'Slack app',
    kind: 'slack_bot',
    botToken: slack.botToken,
    channel: 'C0123',
    signingSecret: slack.signingSecret,
  })
  const answer = await slack.send(local(integration.slack.commandUrl), {
    command: '/incident',
    text: 'declare SEV1 type=security impact=all Phishing of the admin console',
    user_id: 'U_ADA',
    channel_id: 'C0123',
    team_id: 'T0001',
    response_url: slack.responseUrl(),
  })
  const said = (JSON.parse(answer.body) as { text: string }).text
  t.match(said, /^You declared INC-\d+ \(SEV1\) and command it\.$/)
  const number = Number(/INC-(\d+)/.exec(said)![1])
  const incident = (
    (await call(viewer!, 'GET', `${base}/incidents?type=security&field=impact:all`)).json().data as Array<{ id: string; number: number }>
  ).find((candidate) => candidate.number === number)!
  t.ok(incident, 'declared as a Security incident with its impact')
  const followUp = await syncedTicket(incident.id)
  t.match(followUp.ticket, { key: 'SEC-2' })
  const card = await until('the incident’s card in Slack, with its type and fields', () =>
    slack.posts.find((post) => post.text.startsWith(`[SEV1] INC-${number}`) && JSON.stringify(post.blocks).includes('*Type:* Security')),
  )
  t.match(JSON.stringify(card.blocks), '*Customer impact:* all')
  await until('the security policy paged', async () => {
    const data = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/responder-requests`)).json().data as Array<{
      paged: unknown[]
    }>
    return data[0]?.paged.length ? data : undefined
  })
  const resolve = await slack.send(local(integration.slack.commandUrl), {
    command: '/incident',
    text: `resolve INC-${number}`,
    user_id: 'U_ADA',
    channel_id: 'C0123',
    team_id: 'T0001',
    response_url: slack.responseUrl(),
  })
  t.match((JSON.parse(resolve.body) as { text: string }).text, 'fields/root_cause is required to resolve a Security incident')
})

t.test('an RCA action item gets its ticket in Jira, and done there makes it done', async (t) => {
  const owner = person('owner')
  const rca = await created(`${base}/rcas`, { title: 'Token leak' }, owner)
  const items = async () =>
    (await call(owner, 'GET', `${base}/rcas/${rca.id}/action-items`)).json().data as Array<{
      id: string
      status: string
      completedAt: string | null
      ticket: { trackerId: string; syncStatus: string; key: string | null; url: string | null; status: string | null } | null
    }>
  const refused = await call(owner, 'POST', `${base}/rcas/${rca.id}/action-items`, { title: 'Rotate', trackerId: randomUUID() })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().message, 'body/trackerId is not a tracker of the organization')
  t.same(await items(), [], 'a refused item is not kept')

  const item = await created(
    `${base}/rcas/${rca.id}/action-items`,
    { title: 'Scrub tokens from build logs', description: 'CI masks secrets', trackerId: tracker.id },
    owner,
  )
  t.match(item.ticket, { trackerId: tracker.id, syncStatus: 'pending', key: null })
  const synced = await until('the item’s ticket', async () => (await items()).find((row) => row.ticket?.syncStatus === 'synced'))
  const key = synced.ticket!.key!
  t.match(synced.ticket, { key: /^SEC-\d+$/, url: `${jira.url}/browse/${key}`, status: 'To Do' })
  const issue = jira.issues.find((candidate) => candidate.key === key)
  t.match(issue, { summary: 'Scrub tokens from build logs' })
  t.match(JSON.stringify(issue!.description), 'Action item of the RCA \\"Token leak\\"')
  const again = await call(owner, 'PATCH', `${base}/rcas/${rca.id}/action-items/${item.id}`, { trackerId: tracker.id })
  t.equal(again.statusCode, 409)
  t.equal(again.json().message, 'the action item has its ticket already')

  t.equal(await jira.transition(key, 'Done', 'done'), 204)
  const done = await until('the item done', async () => (await items()).find((row) => row.status === 'done'))
  t.ok(done.completedAt, 'stamped when done')
  t.equal(done.ticket!.status, 'Done')
  t.equal(await jira.transition(key, 'To Do', 'new'), 204)
  await until('the item open again', async () => (await items()).find((row) => row.status === 'open' && row.completedAt === null))
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}/action-items`)).statusCode, 404)
})

t.test('a tracker that is down never holds the incident up; a forged or foreign event changes nothing', async (t) => {
  jira.down = true
  const incident = await created(`${base}/incidents`, { title: 'Suspicious login', severity: 'SEV3' }, ada!)
  const added = await call(ada!, 'POST', `${base}/incidents/${incident.id}/follow-ups`, { title: 'Rotate the keys', trackerId: tracker.id })
  t.equal(added.statusCode, 201, 'answered at once')
  t.match(added.json(), { syncStatus: 'pending', ticket: null })
  const failing = await until('the first try’s failure recorded', async () =>
    (await followUpsOf(incident.id)).find((followUp) => followUp.syncError),
  )
  t.match(failing, { syncStatus: 'pending', syncError: /503/ }, 'kept pending, to be tried again')
  t.equal(
    (await call(ada!, 'PATCH', `${base}/incidents/${incident.id}`, { status: 'resolved' })).statusCode,
    200,
    'the incident resolves meanwhile',
  )
  jira.down = false

  const events = local(tracker.webhookUrl)
  const forged = await fetch(events, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature': 'sha256=00' },
    body: JSON.stringify({
      webhookEvent: 'jira:issue_updated',
      issue: { id: '10001', key: 'SEC-1', fields: { status: { name: 'To Do', statusCategory: { key: 'new' } } } },
    }),
  })
  t.equal(forged.status, 401, 'a forged signature is refused')
  t.equal(
    (
      await fetch(events.replace(tracker.id, '00000000-0000-4000-8000-000000000000'), {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    404,
  )
  t.equal(
    (
      await call(ada!, 'POST', `${base}/incidents/${incident.id}/follow-ups`, {
        title: 'X',
        trackerId: '00000000-0000-4000-8000-000000000000',
      })
    ).statusCode,
    400,
  )
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incidents/${incident.id}/follow-ups`)).statusCode, 404)

  const [followUp] = await followUpsOf(incident.id)
  const changed = await call(ada!, 'PATCH', `${base}/incidents/${incident.id}/follow-ups/${followUp!.id}`, {
    title: 'Rotate every key',
    status: 'done',
  })
  t.match(changed.json(), { title: 'Rotate every key', status: 'done' })
  t.equal((await call(viewer!, 'PATCH', `${base}/incidents/${incident.id}/follow-ups/${followUp!.id}`, { status: 'open' })).statusCode, 403)
  t.equal(
    (await call(ada!, 'PATCH', `${base}/incidents/${incident.id}/follow-ups/00000000-0000-4000-8000-000000000000`, { status: 'open' }))
      .statusCode,
    404,
  )
})

t.test('a disabled tracker fails its follow-ups with the reason; a disconnected one leaves their tickets', async (t) => {
  const disabled = await call(manager!, 'PATCH', `${base}/trackers/${tracker.id}`, {
    enabled: false,
    issueType: 'Bug',
    credential: jira.apiToken,
  })
  t.match(disabled.json(), { enabled: false, issueType: 'Bug' })
  const incident = await created(`${base}/incidents`, { title: 'Leaked backup', severity: 'SEV3' }, ada!)
  await created(`${base}/incidents/${incident.id}/follow-ups`, { title: 'Encrypt backups', trackerId: tracker.id }, ada!)
  const failed = await until('the follow-up failed', async () =>
    (await followUpsOf(incident.id)).find((followUp) => followUp.syncStatus === 'failed'),
  )
  t.equal(failed.syncError, 'the tracker "Jira" is disabled')
  t.match((await call(viewer!, 'GET', `${base}/trackers`)).json(), { meta: { total: 1 }, data: [{ name: 'Jira' }] })
  t.equal((await call(manager!, 'DELETE', `${base}/trackers/${tracker.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/trackers/${tracker.id}`)).statusCode, 404)
})

t.test('a Linear tracker: the issue is created through @linear/sdk and its state comes back by its signed webhook', async (t) => {
  const webhookSecret = 'lin_wh_test_signing_secret'
  const linearTracker = await created(`${base}/trackers`, {
    name: 'Linear',
    kind: 'linear',
    apiKey: linear.apiKey,
    teamId: linear.teamId,
    webhookSecret,
    apiUrl: linear.apiUrl,
  })
  t.equal(linearTracker.webhookSecret, webhookSecret, 'Linear’s own signing secret, as given')
  linear.registerWebhook(local(linearTracker.webhookUrl), webhookSecret)
  const incident = await created(`${base}/incidents`, { title: 'Stale cache served', severity: 'SEV3' }, ada!)
  await created(`${base}/incidents/${incident.id}/follow-ups`, { title: 'Add a cache purge runbook', trackerId: linearTracker.id }, ada!)
  const followUp = await syncedTicket(incident.id)
  t.match(followUp.ticket, { key: 'SEC-1', url: 'https://linear.app/acme/issue/SEC-1', status: 'Todo' })
  t.match(linear.issues[0], {
    teamId: linear.teamId,
    title: 'Add a cache purge runbook',
    description: /Follow-up of INC-\d+: Stale cache served/,
  })

  t.equal(await linear.moveTo('SEC-1', 'Done', 'completed'), 204)
  t.match((await followUpsOf(incident.id))[0], { status: 'done', ticket: { status: 'Done' } })
  const forged = await fetch(local(linearTracker.webhookUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'linear-signature': 'f'.repeat(64) },
    body: JSON.stringify({
      type: 'Issue',
      webhookTimestamp: Date.now(),
      data: { id: linear.issues[0]!.id, identifier: 'SEC-1', state: { name: 'Todo', type: 'unstarted' } },
    }),
  })
  t.equal(forged.status, 401)
  t.match((await followUpsOf(incident.id))[0], { status: 'done' }, 'unchanged by the forgery')
})
