import { createHash, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Paging <paging@example.com>', retryDelaySeconds: 1 },
    productLinkBase: 'https://product.example',
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'paging', {
  manager: 'manager',
  ada: 'responder',
  bo: 'responder',
  cy: 'responder',
  viewer: 'viewer',
  bystander: null,
})
const [manager, ada, bo, cy, viewer, bystander, stranger] = ['manager', 'ada', 'bo', 'cy', 'viewer', 'bystander', 'stranger'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

async function created(who: Who, url: string, payload: object): Promise<{ id: string; [key: string]: unknown }> {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

type Attempt = {
  userId: string | null
  email: string | null
  channel: string
  status: string
  step: number
  round: number
  error: string | null
}
type Notifications = {
  escalation: { state: string; policyId: string | null; round: number; step: number; nextAt: string | null; note: string | null } | null
  data: Attempt[]
}
const notifications = async (alertId: string): Promise<Notifications> =>
  (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json()

/** Lets the next step's job run now instead of after its delay, as if the minutes had passed. */
async function advanceClock() {
  await sql`update pgboss.job set start_after = now() where name = 'alerting.escalation-step' and state in ('created', 'retry')`.execute(db)
}

const ingest = (path: string, event: object) =>
  app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(event) })

// Ada is on call in Primary (a weekly rotation of her alone since January); Bo is the Backend
// team's responder; Cy keeps quiet hours all day that only P1 bypasses.
const primary = await created(manager!, `${base}/schedules`, {
  name: 'Primary',
  timeZone: 'Europe/Berlin',
  layers: [{ name: 'Week', start: '2026-01-05', handoffTime: '09:00', turn: { length: 1, unit: 'weeks' }, users: [ada!.userId] }],
})
const backend = await created(manager!, `${base}/teams`, {
  name: 'Backend',
  members: [
    { userId: bo!.userId, role: 'responder' },
    { userId: viewer!.userId, role: 'observer' },
  ],
})
await call(bo!, 'PATCH', '/api/v1/users/me/notifications', {
  channels: { sms: { enabled: true, phoneNumber: '+4915112345678' } },
  priorities: { P3: ['sms', 'email'] },
})
await call(cy!, 'PATCH', '/api/v1/users/me/notifications', {
  quietHours: { enabled: true, start: '00:00', end: '23:59', timeZone: 'UTC', bypassPriorities: ['P1'] },
})

let criticalId = ''
let databaseId = ''

t.test('escalation policies: created with steps and repeats, read by viewers, refused with the field named', async (t) => {
  const critical = await created(manager!, `${base}/escalation-policies`, {
    name: 'Critical',
    repeat: 1,
    steps: [
      { delayMinutes: 5, targets: [{ type: 'schedule', id: primary.id }] },
      {
        delayMinutes: 10,
        targets: [
          { type: 'team', id: backend.id },
          { type: 'user', id: cy!.userId },
        ],
      },
    ],
  })
  criticalId = critical.id
  t.match(critical, { name: 'Critical', repeat: 1, problems: [], steps: [{ delayMinutes: 5 }, { delayMinutes: 10 }] })
  databaseId = (
    await created(manager!, `${base}/escalation-policies`, {
      name: 'Database',
      steps: [{ delayMinutes: 1, targets: [{ type: 'user', id: bo!.userId }] }],
    })
  ).id
  t.match((await call(viewer!, 'GET', `${base}/escalation-policies`)).json(), {
    meta: { total: 2 },
    data: [{ name: 'Critical', stepCount: 2 }],
  })
  t.equal((await call(bystander!, 'GET', `${base}/escalation-policies`)).statusCode, 403)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/escalation-policies/${criticalId}`)).statusCode, 404)

  const step = (targets: object[]) => ({ delayMinutes: 5, targets })
  const cases: Array<[string, Who, object, number, RegExp?]> = [
    ['a viewer', viewer!, { name: 'X', steps: [step([{ type: 'user', id: ada!.userId }])] }, 403],
    ['no steps', manager!, { name: 'X', steps: [] }, 400, /steps/],
    ['a step without targets', manager!, { name: 'X', steps: [step([])] }, 400, /steps\/0\/targets/],
    ['21 steps', manager!, { name: 'X', steps: Array.from({ length: 21 }, () => step([{ type: 'user', id: ada!.userId }])) }, 400, /steps/],
    ['6 repeats', manager!, { name: 'X', repeat: 6, steps: [step([{ type: 'user', id: ada!.userId }])] }, 400, /repeat/],
    ['an unknown user', manager!, { name: 'X', steps: [step([{ type: 'user', id: randomUUID() }])] }, 400, /steps\/0\/targets\/0\/id/],
    [
      "another organization's user",
      manager!,
      {
        name: 'X',
        steps: [
          step([
            { type: 'user', id: ada!.userId },
            { type: 'user', id: stranger!.userId },
          ]),
        ],
      },
      400,
      /steps\/0\/targets\/1\/id/,
    ],
    [
      'an unknown schedule',
      manager!,
      { name: 'X', steps: [step([{ type: 'schedule', id: randomUUID() }])] },
      400,
      /steps\/0\/targets\/0\/id is not a schedule/,
    ],
    ['an unknown team', manager!, { name: 'X', steps: [step([{ type: 'team', id: randomUUID() }])] }, 400, /is not a team/],
    [
      'a zero delay',
      manager!,
      { name: 'X', steps: [{ delayMinutes: 0, targets: [{ type: 'user', id: ada!.userId }] }] },
      400,
      /delayMinutes/,
    ],
    ['a taken name', manager!, { name: 'critical', steps: [step([{ type: 'user', id: ada!.userId }])] }, 409],
  ]
  for (const [what, who, payload, status, message] of cases) {
    const response = await call(who, 'POST', `${base}/escalation-policies`, payload)
    t.equal(response.statusCode, status, what)
    if (message) t.match(response.json().message, message, what)
  }
  t.equal((await call(viewer!, 'GET', `${base}/escalation-policies`)).json().meta.total, 2, 'nothing was written')
})

let paging: { id: string; ingestPath: string } = { id: '', ingestPath: '' }

t.test('webhook configs name a policy and routing rules; unknown policies are refused', async (t) => {
  const refused = await call(manager!, 'POST', `${base}/webhooks`, { name: 'X', escalationPolicyId: randomUUID() })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /escalationPolicyId/)
  const badRule = await call(manager!, 'POST', `${base}/webhooks`, {
    name: 'X',
    routingRules: [
      { match: {}, escalationPolicyId: databaseId },
      { match: { priorities: ['P1'] }, escalationPolicyId: randomUUID() },
    ],
  })
  t.match(badRule.json().message, /routingRules\/1\/escalationPolicyId/)
  const config = await created(manager!, `${base}/webhooks`, {
    name: 'Monitoring',
    escalationPolicyId: criticalId,
    routingRules: [{ match: { labels: { team: 'db' } }, escalationPolicyId: databaseId }],
  })
  paging = { id: config.id, ingestPath: config.ingestPath as string }
  t.match(config, { escalationPolicyId: criticalId, routingRules: [{ match: { labels: { team: 'db' } }, escalationPolicyId: databaseId }] })
  const inUse = await call(manager!, 'DELETE', `${base}/escalation-policies/${databaseId}`)
  t.equal(inUse.statusCode, 409, 'a policy a config routes to is not deleted')
})

let firstAlertId = ''

t.test('a new alert pages whoever is on call by e-mail with a link; the next step pages the team and the user', async (t) => {
  const response = await ingest(paging.ingestPath, { title: 'Checkout is down', service: 'checkout', priority: 'P3' })
  t.equal(response.statusCode, 202)
  firstAlertId = response.json().alertId

  const first = await until('the first step to be sent', async () => {
    const found = await notifications(firstAlertId)
    return found.data.some((attempt) => attempt.status === 'sent') && found
  })
  t.match(first.escalation, { state: 'active', policyId: criticalId, round: 0, step: 1 })
  t.ok(Date.parse(first.escalation!.nextAt!) > Date.now() + 4 * 60_000, 'the second step waits the first step’s five minutes')
  t.same(
    first.data.map((attempt) => [attempt.email, attempt.channel, attempt.status, attempt.step, attempt.round, attempt.error]),
    [
      ['ada@paging.example', 'email', 'sent', 0, 0, null],
      ['ada@paging.example', 'push', 'failed', 0, 0, 'no web-push subscription: subscribe a browser at /api/v1/users/me/contact-methods'],
    ],
    'her default channels for P3: e-mail, and push (no browser subscribed, recorded as failed)',
  )
  const mail = smtp.received.find((received) => received.envelopeTo.includes('ada@paging.example'))
  t.ok(mail, 'the SMTP server received the page')
  t.match(mail!.subject, '[P3] Checkout is down')
  t.match(mail!.text, /Service: checkout/)
  t.match(mail!.text, new RegExp(`https://product\\.example/api/v1/organizations/${orgId}/alerts/${firstAlertId}`))
  t.match(mail!.text, /https:\/\/product\.example\/api\/v1\/alerts\/ack\/[A-Za-z0-9_-]{43}/)

  await advanceClock()
  const second = await until('the second step', async () => {
    const found = await notifications(firstAlertId)
    return found.data.filter((attempt) => attempt.step === 1).length === 3 && found.data.every((a) => a.status !== 'queued') && found
  })
  const secondStep = second.data.filter((attempt) => attempt.step === 1).map((a) => [a.email, a.channel, a.status, a.error])
  t.same(
    secondStep.sort(),
    [
      ['bo@paging.example', 'email', 'sent', null],
      ['bo@paging.example', 'sms', 'failed', 'no verified phone number for SMS: add one at /api/v1/users/me/contact-methods'],
      ['cy@paging.example', 'none', 'failed', 'quiet hours (00:00 to 23:59 UTC); P3 does not bypass them'],
    ].sort(),
    'the team pages its responder (not its observer) on the channels they chose; quiet hours are recorded, not skipped silently',
  )
  t.match(second.escalation, { state: 'active', round: 1, step: 0 }, 'then the policy repeats once')
  const timeline = (await call(viewer!, 'GET', `${base}/alerts/${firstAlertId}/events`))
    .json()
    .data.map((event: { type: string }) => event.type)
  t.same(timeline, ['created', 'escalated', 'escalated'])
})

t.test('the link acknowledges once, as the person paged; the escalation stops and a later step pages no one', async (t) => {
  const mail = smtp.received.find((received) => received.envelopeTo.includes('ada@paging.example'))!
  const link = /https:\/\/product\.example(\/api\/v1\/alerts\/ack\/[A-Za-z0-9_-]+)/.exec(mail.text)![1]!
  const page = await app.inject({ method: 'GET', url: link })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /<form method="post">/)
  t.match(page.body, /\[P3\] Checkout is down/)
  t.match(page.body, /<dt>Status<\/dt><dd>open<\/dd><dt>Service<\/dt><dd>checkout<\/dd>/, 'what the alert is, readable in a browser')
  t.match(mail.text, /See the alert and acknowledge it \(one use, within \d+ hours\): https:\/\/product\.example\/api\/v1\/alerts\/ack\//)
  const before = await notifications(firstAlertId)
  t.equal(before.escalation?.state, 'active', 'opening the page changed nothing')

  const acknowledged = await app.inject({
    method: 'POST',
    url: link,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  })
  t.equal(acknowledged.statusCode, 200)
  t.match(acknowledged.headers['content-type'], /text\/html/, 'the page’s button gets a page back')
  t.match(acknowledged.body, /<h1>Acknowledged<\/h1>/)
  t.match((await call(viewer!, 'GET', `${base}/alerts/${firstAlertId}`)).json(), { status: 'acknowledged', acknowledgedBy: ada!.userId })
  const again = await app.inject({
    method: 'POST',
    url: link,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  })
  t.equal(again.statusCode, 410)
  t.match(again.body, /<h1>Not acknowledged<\/h1><p>this acknowledgement link was used or has expired/)
  t.equal((await app.inject({ method: 'POST', url: link })).statusCode, 410, 'single use')
  const shown = await app.inject({ method: 'GET', url: link })
  t.match(
    shown.body,
    /<p>Acknowledged by ada@[^ ]+ at <time datetime="[^"]+">[^<]+ UTC<\/time>: its escalation has stopped\.<\/p>/,
    'says who and when',
  )
  t.match(shown.body, /<meta name="viewport" content="width=device-width, initial-scale=1">/, 'ready for a phone')
  const style = /<style>(.*)<\/style>/.exec(shown.body)![1]!
  const hash = createHash('sha256').update(style).digest('base64')
  t.match(shown.headers['content-security-policy'], `style-src 'sha256-${hash}'`, 'its one stylesheet allowed by hash, nothing else')
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/alerts/ack/' + 'x'.repeat(43) })).statusCode, 404)

  const attempts = before.data.length
  await advanceClock()
  await until('the step job to finish', async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pgboss.job where name = 'alerting.escalation-step' and state in ('created', 'retry', 'active')`.execute(
      db,
    )
    return rows[0]?.n === 0
  })
  const after = await notifications(firstAlertId)
  t.equal(after.escalation?.state, 'acknowledged')
  t.equal(after.data.length, attempts, 'the step after the acknowledgement paged no one')
})

t.test('a step job delivered twice pages once', async (t) => {
  const response = await ingest(paging.ingestPath, { title: 'Disk full', service: 'db', priority: 'P2', labels: { team: 'db' } })
  const alertId = response.json().alertId
  const paged = await until('the database policy to page', async () => {
    const found = await notifications(alertId)
    return found.data.length > 0 && found.data.every((a) => a.status !== 'queued') && found
  })
  t.match(paged.escalation, { policyId: databaseId, state: 'active', round: 0, step: 1 }, 'the routing rule chose it')
  t.ok(
    new Date(paged.escalation!.nextAt!).getTime() - Date.now() > 50_000,
    'its one step paged, and its minute to acknowledge is waited out before the escalation ends',
  )
  const count = paged.data.length
  const repeats = [
    await app.jobs.send('alerting.escalation-step', { alertId, round: 0, step: 0 }),
    await app.jobs.send('alerting.escalation-step', { alertId, round: 0, step: 0 }),
  ]
  await until('the repeated step jobs to be worked', async () => {
    const states = await Promise.all(repeats.map(async (id) => (await app.jobs.getJobById('alerting.escalation-step', id!))?.state))
    return states.every((state) => state === 'completed')
  })
  t.equal((await notifications(alertId)).data.length, count, 'a repeated job finds its turn taken')
  await advanceClock()
  const exhausted = await until('the last step’s delay to pass', async () => {
    const found = await notifications(alertId)
    return found.escalation?.state === 'exhausted' && found
  })
  t.match(exhausted.escalation, { state: 'exhausted', note: 'every step ran and nobody acknowledged' })
  t.equal(exhausted.data.length, count, 'nobody more is paged when it ends')
  const ended = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/events`)).json().data.map((event: { type: string }) => event.type)
  t.same(ended, ['created', 'escalated', 'escalation_ended'])
})

t.test('an acknowledgement that commits before the first step leaves it nothing to page', async (t) => {
  const response = await ingest(paging.ingestPath, { title: 'Queue backlog', service: 'queue', priority: 'P3', fingerprint: 'backlog' })
  const alertId = response.json().alertId
  // The source acknowledges in the same moment: whichever commits first, nothing pages after it.
  const acked = await ingest(paging.ingestPath, { title: 'Queue backlog', status: 'acknowledged', fingerprint: 'backlog' })
  t.equal(acked.json().status, 'acknowledged')
  await until('the escalation to settle', async () => ['acknowledged'].includes((await notifications(alertId)).escalation?.state ?? ''))
  const settled = await notifications(alertId)
  const pagedAfter = settled.data.filter((attempt) => attempt.step > 0 || attempt.round > 0)
  t.same(pagedAfter, [], 'no step after the acknowledgement')
})

t.test('resolving ends the escalation; a config with rules that do not match pages no one and says why', async (t) => {
  const response = await ingest(paging.ingestPath, { title: 'Latency', service: 'api', fingerprint: 'latency' })
  const alertId = response.json().alertId
  await until('the first page', async () => (await notifications(alertId)).data.length > 0)
  const resolved = await call(ada!, 'POST', `${base}/alerts/${alertId}/resolve`)
  t.equal(resolved.statusCode, 200)
  t.equal((await notifications(alertId)).escalation?.state, 'resolved')

  const rulesOnly = await created(manager!, `${base}/webhooks`, {
    name: 'Only databases',
    routingRules: [{ match: { services: ['postgres'] }, escalationPolicyId: databaseId }],
  })
  const unmatched = await ingest(rulesOnly.ingestPath as string, { title: 'Cache miss rate', service: 'redis' })
  const unrouted = await until('routing', async () => {
    const found = await notifications(unmatched.json().alertId)
    return found.escalation?.state !== 'pending' && found
  })
  t.match(unrouted, { escalation: { state: 'unrouted', note: /no routing rule matched/ }, data: [] })

  const quiet = await created(manager!, `${base}/webhooks`, { name: 'No paging' })
  const alone = await ingest(quiet.ingestPath as string, { title: 'FYI' })
  t.same(await notifications(alone.json().alertId), { escalation: null, data: [] }, 'a config without a policy does not escalate')
  t.equal((await call(bystander!, 'GET', `${base}/alerts/${alertId}/notifications`)).statusCode, 403)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/alerts/${alertId}/notifications`)).statusCode, 404)
})

t.test('a deleted schedule or team leaves the policies that named it, audited; a step left empty is reported', async (t) => {
  t.equal((await call(manager!, 'DELETE', `${base}/schedules/${primary.id}`)).statusCode, 204)
  const policy = (await call(viewer!, 'GET', `${base}/escalation-policies/${criticalId}`)).json()
  t.same(policy.steps[0].targets, [])
  t.same(policy.problems, ['steps/0 has no targets left: it pages no one until one is added'])
  t.equal((await call(manager!, 'DELETE', `${base}/teams/${backend.id}`)).statusCode, 204)
  const after = (await call(viewer!, 'GET', `${base}/escalation-policies/${criticalId}`)).json()
  t.same(after.steps[1].targets, [{ type: 'user', id: cy!.userId }])
  const audits = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'changes'])
    .where('entityId', '=', criticalId)
    .where('action', '=', 'escalation_policy.target_removed')
    .orderBy('createdAt')
    .execute()
  t.same(
    audits.map((row) => (row.changes as { before: { target: object } }).before.target),
    [
      { type: 'schedule', id: primary.id },
      { type: 'team', id: backend.id },
    ],
  )
})

t.test('a policy no config names is deleted, audited', async (t) => {
  t.equal((await call(manager!, 'PATCH', `${base}/webhooks/${paging.id}`, { routingRules: [] })).statusCode, 200)
  const stillNamed = await call(manager!, 'DELETE', `${base}/escalation-policies/${databaseId}`)
  t.match(stillNamed.json().message, /Only databases escalates with this policy/, 'the 409 names the config still using it')
  const onlyDatabases = (await call(viewer!, 'GET', `${base}/webhooks?limit=100`))
    .json()
    .data.find((config: { name: string }) => config.name === 'Only databases')
  t.equal((await call(manager!, 'PATCH', `${base}/webhooks/${onlyDatabases.id}`, { routingRules: [] })).statusCode, 200)
  t.equal((await call(manager!, 'DELETE', `${base}/escalation-policies/${databaseId}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/escalation-policies/${databaseId}`)).statusCode, 404)
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', databaseId).orderBy('createdAt').execute()
  t.same(
    audit.map((row) => row.action),
    ['escalation_policy.created', 'escalation_policy.deleted'],
  )
})
