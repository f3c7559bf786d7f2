import t from 'tap'
import { startSlackServer, startTestService, until, type SlackPost } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Working incidents from Slack (decision 0020), driven as Slack drives us: signed form posts of
// button presses and slash commands, and Slack's Web API (a loopback server) answering the
// official SDK the service uses.

const slack = await startSlackServer(t)
const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: true, slackApiUrl: slack.apiUrl }, productLinkBase: 'https://product.example' },
})
const { app } = service
const db = app.database.db
// Slack posts to us over HTTP, so the service listens (signatures are over the exact bytes sent).
const address = await app.listen({ host: '127.0.0.1', port: 0 })
const { orgId, person } = await alertingOrganization(service, 'slackops', {
  manager: 'manager',
  responder: 'responder',
  viewer: 'viewer',
})
const [owner, manager, responder] = ['owner', 'manager', 'responder'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

slack.addUser('U_RESP', 'Responder@slackops.example')
slack.addUser('U_MGR', 'manager@slackops.example')
slack.addUser('U_VIEW', 'viewer@slackops.example')
slack.addUser('U_OUT', 'outsider@elsewhere.example')

let integration: { id: string; slack: { interactivityUrl: string; commandUrl: string } }
let interactivityUrl = ''
let commandUrl = ''
const local = (url: string) => `${address}${new URL(url).pathname}`

/**
 * A button of a message we posted, as Slack would send its press. The service keeps the message
 * just after Slack answers its post, and ignores presses on messages it has not kept; the loopback
 * Slack shows the post a few milliseconds earlier than that, so the press waits for it (a test
 * that pressed at once failed when CI was loaded).
 */
async function press(post: SlackPost, action: string, slackUserId: string) {
  await until('the message kept by the service', () =>
    db.selectFrom('divinux.slackMessages').select('ts').where('channel', '=', post.channel).where('ts', '=', post.ts).executeTakeFirst(),
  )
  const blocks = (post.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string; value?: string }> }>
  const button = blocks
    .flatMap((block) => (block.type === 'actions' ? (block.elements ?? []) : []))
    .find((element) => element.action_id === action)
  if (!button) throw new Error(`the message has no ${action} button`)
  const responseUrl = slack.responseUrl()
  const payload = {
    type: 'block_actions',
    user: { id: slackUserId },
    team: { id: 'T0001' },
    channel: { id: post.channel },
    message: { ts: post.ts },
    response_url: responseUrl,
    actions: [{ type: 'button', action_id: action, value: button.value }],
  }
  return slack.send(interactivityUrl, { payload: JSON.stringify(payload) }).then((answer) => ({
    ...answer,
    /** The ephemeral line the presser saw. */
    said: () => until('the ephemeral answer', () => slack.responses.find((response) => responseUrl.endsWith(response.id))?.body.text),
  }))
}

const command = async (text: string, slackUserId: string, channel = 'C0123') => {
  const answer = await slack.send(commandUrl, {
    command: '/incident',
    text,
    user_id: slackUserId,
    channel_id: channel,
    team_id: 'T0001',
    response_url: slack.responseUrl(),
  })
  return { status: answer.status, text: (JSON.parse(answer.body) as { text: string }).text }
}

/** The value the buttons of a message carry (what they act on). */
const buttonValue = (post: SlackPost) =>
  ((post.blocks ?? []) as Array<{ type: string; elements?: Array<{ value?: string }> }>).find((block) => block.type === 'actions')
    ?.elements?.[0]?.value

const buttonsOf = (post: SlackPost | undefined) =>
  ((post?.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string }> }>)
    .filter((block) => block.type === 'actions')
    .flatMap((block) => (block.elements ?? []).map((element) => element.action_id))

t.test('a Slack app with a signing secret: its URLs are answered, the secret never; channels per incident need the secret', async (t) => {
  const created = await call(manager!, 'POST', `${base}/chat-integrations`, {
    name: 'Slack app',
    kind: 'slack_bot',
    botToken: slack.botToken,
    channel: 'C0123',
    signingSecret: slack.signingSecret,
    incidentChannels: true,
  })
  t.equal(created.statusCode, 201)
  integration = created.json()
  t.match(integration, {
    interactive: true,
    incidentChannels: true,
    slack: {
      interactivityUrl: `https://product.example/api/v1/chat/slack/${integration.id}/interactivity`,
      commandUrl: `https://product.example/api/v1/chat/slack/${integration.id}/commands`,
    },
  })
  t.notMatch(created.body, slack.signingSecret, 'the secret is not answered')
  interactivityUrl = local(integration.slack.interactivityUrl)
  commandUrl = local(integration.slack.commandUrl)

  const refused: Array<[object, RegExp]> = [
    [
      { name: 'X', kind: 'slack_bot', botToken: slack.botToken, channel: 'C1', incidentChannels: true },
      /incidentChannels needs a signingSecret/,
    ],
    [
      { name: 'X', kind: 'slack', webhookUrl: 'https://hooks.slack.com/services/x', signingSecret: slack.signingSecret },
      /signingSecret is not used by slack/,
    ],
    [{ name: 'X', kind: 'slack_bot', botToken: slack.botToken, channel: 'C1', signingSecret: 'short' }, /signingSecret/],
  ]
  for (const [payload, message] of refused) {
    const response = await call(manager!, 'POST', `${base}/chat-integrations`, payload)
    t.equal(response.statusCode, 400)
    t.match(response.json().message, message)
  }
  const audit = await db.selectFrom('core.auditLogs').select('changes').where('entityId', '=', integration.id).executeTakeFirstOrThrow()
  t.notMatch(JSON.stringify(audit.changes), slack.signingSecret, 'nor is it in the audit log')
})

t.test('only requests Slack signed with the app’s secret in the last five minutes are heard', async (t) => {
  const form = { command: '/incident', text: 'help', user_id: 'U_RESP', channel_id: 'C0123' }
  t.equal((await slack.send(commandUrl, form)).status, 200)
  const wrongSecret = await slack.send(commandUrl, form, { secret: 'a'.repeat(32) })
  t.equal(wrongSecret.status, 403)
  t.match(JSON.parse(wrongSecret.body), { message: /signature does not match/ })
  const stale = await slack.send(commandUrl, form, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 })
  t.equal(stale.status, 403)
  t.match(JSON.parse(stale.body), { message: /last five minutes/ })
  const unsigned = await fetch(commandUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  })
  t.equal(unsigned.status, 403)
  const unknown = await slack.send(commandUrl.replace(integration.id, '00000000-0000-4000-8000-000000000000'), form)
  t.equal(unknown.status, 404)
})

t.test('a page carries buttons that work as the mapped person; others get an ephemeral refusal and change nothing', async (t) => {
  const policy = await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Slack twice',
    steps: [
      { delayMinutes: 30, targets: [{ type: 'chat', id: integration.id }] },
      { delayMinutes: 30, targets: [{ type: 'chat', id: integration.id }] },
    ],
  })
  const config = (await call(manager!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.json().id })).json()
  const ingested = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: 'Queue backlog', service: 'queue', priority: 'P4' }),
  })
  const alertId = ingested.json().alertId as string
  const page = await until('the page in Slack', () => slack.posts.find((post) => post.text.includes('Queue backlog')))
  t.same(buttonsOf(page), ['acknowledge', 'resolve', 'escalate'], 'an open alert in no incident')
  const infoCallsBefore = slack.userInfoCalls()

  const byViewer = await press(page, 'acknowledge', 'U_VIEW')
  t.equal(byViewer.status, 200)
  t.equal(await byViewer.said(), 'This needs the alerting role responder or higher.')
  t.equal(
    await (await press(page, 'acknowledge', 'U_OUT')).said(),
    'outsider@elsewhere.example is not a member of this organization, so you cannot act on its incidents.',
  )
  t.match(await (await press(page, 'resolve', 'U_NOBODY')).said(), /Slack gave no e-mail address/)
  t.equal((await call(responder!, 'GET', `${base}/alerts/${alertId}`)).json().status, 'open', 'refusals change nothing')

  const escalated = await press(page, 'escalate', 'U_RESP')
  t.equal(await escalated.said(), 'Escalated: step 2 paged now.')
  await until('the second step’s page', () => slack.posts.filter((post) => post.text.includes('Queue backlog')).length === 2)

  const acknowledged = await press(page, 'acknowledge', 'U_RESP')
  t.equal(await acknowledged.said(), 'You acknowledged the alert.')
  const alert = (await call(responder!, 'GET', `${base}/alerts/${alertId}`)).json()
  t.match(alert, { status: 'acknowledged', acknowledgedBy: responder!.userId })
  const rewritten = slack.updates.filter((update) => update.ts === page.ts).at(-1)
  t.same(buttonsOf(rewritten), ['resolve'], 'the message now offers what is left')
  t.match(JSON.stringify(rewritten?.blocks), /Acknowledged by responder@slackops\.example/)
  t.equal(await (await press(page, 'acknowledge', 'U_RESP')).said(), 'The alert is acknowledged already.')

  const events = (await call(responder!, 'GET', `${base}/alerts/${alertId}/events`)).json().data as Array<{ type: string; data: object }>
  t.match(
    events.find((event) => event.type === 'acknowledged'),
    { data: { via: 'slack' } },
  )
  // Four Slack users pressed buttons here; U_RESP ran /incident help above, so Slack was asked about it then.
  t.equal(slack.userInfoCalls() - infoCallsBefore, 3, 'users.info once per Slack user: what it said is cached')
})

t.test('/incident declares and works an incident; its channel, card and timeline follow in Slack', async (t) => {
  const declared = await command('declare SEV2 Checkout is down', 'U_RESP')
  t.equal(declared.status, 200)
  t.match(declared.text, /^You declared INC-(\d+) \(SEV2\) and command it\.$/)
  const reference = /INC-\d+/.exec(declared.text)![0]
  const incident = (await call(responder!, 'GET', `${base}/incidents?status=open`))
    .json()
    .data.find((candidate: { reference: string }) => candidate.reference === reference)
  t.match(incident, { title: 'Checkout is down', severity: 'SEV2', status: 'triage' })

  const room = await until('the incident’s channel, with its commander invited', () =>
    slack.channels.find((channel) => channel.name === `${reference.toLowerCase()}-checkout-is-down` && channel.invited.includes('U_RESP')),
  )
  const cardIn = (channel: string) => slack.posts.find((post) => post.channel === channel && post.text.startsWith(`[SEV2] ${reference}`))
  const announced = await until('the card in the app’s channel', () => cardIn('C0123'))
  await until('the card in the incident’s channel', () => cardIn(room.id))
  t.same(buttonsOf(announced), ['acknowledge', 'resolve', 'escalate', 'join'])
  t.match(JSON.stringify(announced.blocks), new RegExp(`Worked in #${room.name}`))

  t.match((await command('ack', 'U_RESP', 'C0123')).text, /this is not an incident’s channel/, 'outside its channel the incident is named')
  t.equal((await command('ack', 'U_RESP', room.id)).text, `You acknowledged ${reference}: it is investigating.`)
  t.equal((await call(responder!, 'GET', `${base}/incidents/${incident.id}`)).json().status, 'investigating')
  await until('the card rewritten', () =>
    slack.updates.some((update) => update.ts === announced.ts && /Status:\* investigating/.test(JSON.stringify(update.blocks))),
  )

  t.equal(
    (await command('status Rolling back the 14:02 deploy', 'U_RESP', room.id)).text,
    'Status update posted to the incident’s timeline.',
  )
  await until('the timeline in the incident’s channel', () =>
    slack.posts.some(
      (post) =>
        post.channel === room.id && post.text.includes(':mega: Status update (responder@slackops.example): Rolling back the 14:02 deploy'),
    ),
  )

  const joined = await press(announced, 'join', 'U_MGR')
  t.equal(await joined.said(), `You joined ${reference} as a responder.`)
  t.equal(await (await press(announced, 'join', 'U_MGR')).said(), `You are a responder of ${reference} already.`)
  t.match((await call(responder!, 'GET', `${base}/incidents/${incident.id}`)).json().responders, [
    { userId: manager!.userId, email: 'manager@slackops.example', via: 'chat' },
  ])
  await until('the new responder invited to the channel', () => room.invited.includes('U_MGR'))
  t.equal(await (await press(announced, 'escalate', 'U_RESP')).said(), `Nothing of ${reference} is waiting to escalate.`)

  t.equal((await command(`resolve ${reference}`, 'U_RESP', 'C0999')).text, `You resolved ${reference}.`)
  await until('the card without buttons once resolved', () =>
    slack.updates.some(
      (update) => update.ts === announced.ts && buttonsOf(update).length === 0 && /Status:\* resolved/.test(JSON.stringify(update.blocks)),
    ),
  )

  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorUserId'])
    .where('entityId', '=', incident.id)
    .orderBy('createdAt')
    .execute()
  t.same(
    audit.map((entry) => entry.action),
    ['incident.declared', 'incident.updated', 'incident.status_update_added', 'incident.responder_joined', 'incident.updated'],
  )
  t.same(
    audit.map((entry) => entry.actorUserId),
    [responder, responder, responder, manager, responder].map((who) => who!.userId),
    'by the people Slack named',
  )
})

t.test('/incident statuspage publishes on the status pages in a template’s words, for statuspages managers', async (t) => {
  // The owner holds every product role; the responder holds alerting's only.
  slack.addUser('U_OWN', 'owner@slackops.example')
  const declared = await command('declare SEV2 Payments failing', 'U_RESP')
  const reference = /INC-\d+/.exec(declared.text)![0]
  t.equal(
    (await command(`statuspage ${reference} template=payments-failing`, 'U_RESP')).text,
    'Publishing on status pages needs the statuspages role manager.',
  )
  t.match((await command(`statuspage ${reference}`, 'U_OWN')).text, /Say what to publish, or name a template/)
  t.equal(
    (await command(`statuspage ${reference} template=payments-failing identified`, 'U_OWN')).text,
    `Published on the status pages of ${reference} (identified, template payments-failing).`,
  )
  t.equal(
    (await command(`statuspage ${reference} monitoring Payments recover as the fix rolls out.`, 'U_OWN')).text,
    `Published on the status pages of ${reference} (monitoring).`,
  )
  const incident = (await call(owner!, 'GET', `${base}/incidents?status=open`))
    .json()
    .data.find((candidate: { reference: string }) => candidate.reference === reference)
  const updates = await db
    .selectFrom('divinux.incidentTimeline')
    .select(['body', 'data', 'authorId'])
    .where('incidentId', '=', incident.id)
    .where('kind', '=', 'status_update')
    .orderBy('createdAt')
    .execute()
  t.match(updates, [
    {
      body: 'Status page template payments-failing',
      data: { statusPages: { status: 'identified', publish: true, template: 'payments-failing' } },
      authorId: owner!.userId,
    },
    { body: 'Payments recover as the fix rolls out.', data: { statusPages: { status: 'monitoring', publish: true } } },
  ])
})

t.test('/incident refuses what it cannot do, and says how to use it', async (t) => {
  t.equal((await command('declare Nope', 'U_VIEW')).text, 'This needs the alerting role responder or higher.')
  t.match((await command('declare', 'U_RESP')).text, /Give the incident a title/)
  t.match((await command('ack INC-99999', 'U_RESP')).text, /There is no INC-99999/)
  t.match((await command('frobnicate', 'U_RESP')).text, /`\/incident declare \[<severity>\] \[type=<key>\] \[<field>=<value> …\] <title>`/)
  const open = (await call(owner!, 'GET', `${base}/incidents`)).json().data as Array<{ title: string }>
  t.notOk(
    open.some((incident) => incident.title === 'Nope'),
    'a refused declaration declares nothing',
  )
})

t.test('/incident declares a typed incident with its fields, sets them, and is told what resolving needs', async (t) => {
  for (const field of [
    { key: 'impact', name: 'Customer impact', kind: 'select', options: ['none', 'some', 'all'] },
    { key: 'regions', name: 'Regions', kind: 'multi_select', options: ['eu', 'us'] },
    { key: 'customers', name: 'Customers hit', kind: 'number' },
    { key: 'root_cause', name: 'Root cause', kind: 'text' },
  ])
    t.equal((await call(manager!, 'POST', `${base}/incident-fields`, field)).statusCode, 201)
  const type = await call(manager!, 'POST', `${base}/incident-types`, {
    key: 'security',
    name: 'Security',
    fields: [
      { field: 'impact', required: 'declare' },
      { field: 'root_cause', required: 'resolve' },
    ],
  })
  t.equal(type.statusCode, 201)

  t.match(
    (await command('declare SEV2 type=security Token leaked', 'U_RESP')).text,
    'fields/impact is required to declare a Security incident: set "Customer impact" (impact)',
  )
  const declared = await command('declare SEV2 type=security impact=some regions=eu,us customers=40 Token leaked', 'U_RESP')
  t.match(declared.text, /^You declared INC-\d+ \(SEV2\)/)
  const reference = /INC-\d+/.exec(declared.text)![0]
  const incident = (
    (await call(responder!, 'GET', `${base}/incidents?type=security`)).json().data as Array<{ id: string; reference: string }>
  ).find((candidate) => candidate.reference === reference)!
  t.match((await call(responder!, 'GET', `${base}/incidents/${incident.id}`)).json(), {
    title: 'Token leaked',
    type: 'security',
    fields: { impact: 'some', regions: ['eu', 'us'], customers: 40 },
  })
  t.match((await command(`resolve ${reference}`, 'U_RESP')).text, 'fields/root_cause is required to resolve a Security incident')
  t.equal((await command(`set ${reference} root_cause=rotated impact=`, 'U_RESP')).text, `You updated ${reference}.`)
  t.match((await call(responder!, 'GET', `${base}/incidents/${incident.id}`)).json().fields, { root_cause: 'rotated' })
  t.match((await command(`resolve ${reference}`, 'U_RESP')).text, 'fields/impact is required', 'an empty value cleared it')
  t.equal((await command(`set ${reference} impact=none`, 'U_RESP')).text, `You updated ${reference}.`)
  t.equal((await command(`resolve ${reference}`, 'U_RESP')).text, `You resolved ${reference}.`)
  t.match((await command(`set ${reference} Something`, 'U_RESP')).text, /Say what to set/)
  t.equal(
    (await call(manager!, 'PUT', `${base}/incident-checklists/commander`, { tasks: ['Open a bridge', 'Post an update'] })).statusCode,
    200,
  )
  t.equal((await command(`done ${reference} commander 2`, 'U_RESP')).text, `Done on ${reference}: Post an update.`)
  t.equal((await command(`done ${reference} commander 2`, 'U_RESP')).text, `That was done on ${reference} already: Post an update.`)
  t.match((await command(`done ${reference} commander 9`, 'U_RESP')).text, /task 9 of the commander checklist/)
  t.match((await command(`done ${reference} commander`, 'U_RESP')).text, /Say which task/)
})

t.test('a captured request sent again within the signature’s five minutes acts once', async (t) => {
  const form = {
    command: '/incident',
    text: 'declare SEV3 Replayed declaration',
    user_id: 'U_RESP',
    channel_id: 'C0123',
    team_id: 'T0001',
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    response_url: slack.responseUrl(),
  }
  const timestamp = Math.floor(Date.now() / 1000)
  const first = await slack.send(commandUrl, form, { timestamp })
  t.match(JSON.parse(first.body).text, /^You declared INC-\d+/)
  const replayed = await slack.send(commandUrl, form, { timestamp })
  t.equal(replayed.status, 200)
  t.match(JSON.parse(replayed.body).text, /run already/)
  const declared = (await call(owner!, 'GET', `${base}/incidents`)).json().data as Array<{ title: string }>
  t.equal(declared.filter((incident) => incident.title === 'Replayed declaration').length, 1, 'one incident, so one channel')
})

t.test('a responder joins through the API too; joining twice changes nothing', async (t) => {
  const declared = await call(owner!, 'POST', `${base}/incidents`, { title: 'Search slow', severity: 'SEV3' })
  const id = declared.json().id
  const joined = await call(responder!, 'POST', `${base}/incidents/${id}/join`)
  t.equal(joined.statusCode, 200)
  t.match(joined.json().responders, [{ userId: responder!.userId, via: 'api' }])
  t.equal((await call(responder!, 'POST', `${base}/incidents/${id}/join`)).json().responders.length, 1)
  const timeline = (await call(responder!, 'GET', `${base}/incidents/${id}/timeline`)).json().data as Array<{ kind: string }>
  t.equal(timeline.filter((entry) => entry.kind === 'responder_joined').length, 1)
})

t.test('what Slack sends that is not ours to act on changes nothing', async (t) => {
  const notJson = await slack.send(interactivityUrl, { payload: '{not json' })
  t.equal(notJson.status, 400)
  t.match(JSON.parse(notJson.body), { message: /payload is not JSON/ })
  const viewSubmission = await slack.send(interactivityUrl, {
    payload: JSON.stringify({ type: 'view_submission', user: { id: 'U_RESP' } }),
  })
  t.equal(viewSubmission.status, 200, 'other interaction types are acknowledged and ignored')
  const card = slack.posts.find((post) => post.channel === 'C0123' && post.text.startsWith('[SEV2]'))!
  const updatesBefore = slack.updates.length
  const foreign = await slack.send(interactivityUrl, {
    payload: JSON.stringify({
      type: 'block_actions',
      user: { id: 'U_RESP' },
      channel: { id: 'C0123' },
      message: { ts: '1.000001' },
      response_url: slack.responseUrl(),
      actions: [{ action_id: 'resolve', value: (card.blocks as Array<{ block_id?: string }>).find((block) => block.block_id)?.block_id }],
    }),
  })
  t.equal(foreign.status, 200)
  t.equal(slack.updates.length, updatesBefore, 'a button on a message we did not post does nothing')

  const page = slack.posts.find((post) => post.text.includes('Queue backlog'))!
  const join = await slack.send(interactivityUrl, {
    payload: JSON.stringify({
      type: 'block_actions',
      user: { id: 'U_RESP' },
      channel: { id: page.channel },
      message: { ts: page.ts },
      response_url: slack.responseUrl(),
      actions: [{ action_id: 'join', value: buttonValue(page) }],
    }),
  })
  t.equal(join.status, 200)
  await until('the refusal', () => slack.responses.at(-1)?.body.text === 'The alert is in no incident to join.')

  await call(manager!, 'PATCH', `${base}/chat-integrations/${integration.id}`, { enabled: false })
  t.equal((await command('help', 'U_RESP')).text, 'This Slack integration is turned off.')
  await call(manager!, 'PATCH', `${base}/chat-integrations/${integration.id}`, { enabled: true })
})

t.test('Slack keeps up when it refused for a while, and a taken channel name gets a suffix', async (t) => {
  slack.channels.push({ id: 'C-TAKEN', name: 'inc-taken', invited: [] })
  await call(manager!, 'PATCH', `${base}/chat-integrations/${integration.id}`, { botToken: 'xoxb-revoked-token' })
  const refusedBefore = slack.refusals()
  const declared = await command('declare taken', 'U_RESP')
  const reference = /INC-(\d+)/.exec(declared.text)![0]
  const number = Number(reference.slice('INC-'.length))
  // With the token refused, nothing reaches Slack; the incident is tried again later.
  await until('Slack refused the token while the incident was taken', async () => {
    const row = await db
      .selectFrom('divinux.incidents')
      .select('chatSyncUntil')
      .where('organizationId', '=', orgId)
      .where('number', '=', number)
      .executeTakeFirstOrThrow()
    return slack.refusals() > refusedBefore && row.chatSyncUntil !== null
  })
  t.notOk(slack.channels.some((channel) => channel.name.startsWith(`${reference.toLowerCase()}-taken`)))
  slack.channels.push({ id: 'C-CLASH', name: `${reference.toLowerCase()}-taken`, invited: [] })
  await call(manager!, 'PATCH', `${base}/chat-integrations/${integration.id}`, { botToken: slack.botToken })
  // A refused incident is tried again 30 s later, so each look hurries the retries: a round that
  // read the old token may still record one after the new token is in (a single hurry lost to it).
  const hurry = () => db.updateTable('divinux.incidents').set({ chatSyncUntil: null }).execute()
  const room = await until('the channel, under a name of its own', async () => {
    await hurry()
    return slack.channels.find((channel) => channel.name.startsWith(`${reference.toLowerCase()}-taken-`) && channel.invited.length > 0)
  })
  t.match(room.name, new RegExp(`^${reference.toLowerCase()}-taken-[0-9a-f]{8}$`))
  // Once shown, an incident is not behind again until it changes (PostgreSQL keeps microseconds).
  let behind: Array<{ number: number; title: string }> = []
  await until('every incident shown as it is', async () => {
    await hurry()
    behind = await db
      .selectFrom('divinux.incidents')
      .select(['number', 'title'])
      .where((eb) => eb.or([eb('chatSyncedAt', 'is', null), eb('chatSyncedAt', '<', eb.ref('updatedAt'))]))
      .execute()
    return behind.length === 0
  }).catch(() => undefined)
  t.same(behind, [], 'every incident shown as it is')
  t.ok(room.invited.includes('U_RESP'))
})
