import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// Responders (decision 0019): people, teams, schedules and policies asked to help with an
// incident are paged like any alert's people, and the incident shows who was paged and who
// answered; reassigning pages the new assignee and puts the incident back in triage.

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Paging <paging@example.com>', retryDelaySeconds: 1 },
    productLinkBase: 'https://product.example',
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'responders', {
  manager: 'manager',
  ada: 'responder',
  bo: 'responder',
  cy: 'responder',
  viewer: 'viewer',
})
const [manager, ada, bo, cy, viewer] = ['manager', 'ada', 'bo', 'cy', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
// Pages only: a request that resolves tells whoever it paged (`Resolved: …`), which is not a page.
const pagesTo = (email: string) =>
  smtp.received.filter((mail) => mail.envelopeTo.includes(email) && /^\[P\d\] Responder request/.test(mail.subject)).length

const team = (
  await call(manager!, 'POST', `${base}/teams`, { name: 'Payments', members: [{ userId: cy!.userId, role: 'responder' }] })
).json()
const policy = (
  await call(manager!, 'POST', `${base}/escalation-policies`, {
    name: 'Payments on call',
    steps: [{ delayMinutes: 15, targets: [{ type: 'user', id: ada!.userId }] }],
  })
).json()

type Request = {
  requestId: string
  target: { type: string; id: string }
  status: string
  paged: Array<{ email: string; channel: string }>
  acknowledgedBy: { userId: string; email: string } | null
  acknowledgedAt: string | null
}

t.test('people, teams and policies are paged about an incident; who answered becomes a responder', async (t) => {
  const incident = (await call(ada!, 'POST', `${base}/incidents`, { title: 'Card payments declined', severity: 'SEV2' })).json()
  const url = `${base}/incidents/${incident.id}`

  const unknown = await call(ada!, 'POST', `${url}/responder-requests`, {
    targets: [
      { type: 'user', id: bo!.userId },
      { type: 'team', id: policy.id },
    ],
  })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /targets\/1\/id is not a team of the organization/)
  t.equal((await call(viewer!, 'POST', `${url}/responder-requests`, { targets: [{ type: 'user', id: bo!.userId }] })).statusCode, 403)
  t.equal(
    (await call(person('stranger'), 'GET', `/api/v1/organizations/${otherOrgId}/incidents/${incident.id}/responder-requests`)).statusCode,
    404,
  )

  const asked = await call(ada!, 'POST', `${url}/responder-requests`, {
    targets: [
      { type: 'user', id: bo!.userId },
      { type: 'team', id: team.id },
      { type: 'escalation_policy', id: policy.id },
    ],
    message: 'Acquirer returns 05 for every card',
  })
  t.equal(asked.statusCode, 201)
  const [toBo, toTeam, toPolicy] = asked.json().data as Request[]
  t.match(toBo, { target: { type: 'user', id: bo!.userId }, status: 'open', acknowledgedBy: null })
  await until('the pages', () => pagesTo(bo!.email) === 1 && pagesTo(cy!.email) === 1 && pagesTo(ada!.email) === 1)
  const page = smtp.received.find((mail) => mail.envelopeTo.includes(bo!.email))!
  t.match(page.subject, /Responder request for INC-\d+: Card payments declined/)
  t.match(page.text, /Acquirer returns 05 for every card/)

  const listed = (await call(viewer!, 'GET', `${url}/responder-requests`)).json().data as Request[]
  t.same(
    listed.map((request) => [request.target.type, [...new Set(request.paged.map((attempt) => attempt.email))]]),
    [
      ['user', [bo!.email]],
      ['team', [cy!.email]],
      ['escalation_policy', [ada!.email]],
    ],
    'who each request paged',
  )

  t.equal((await call(bo!, 'POST', `${base}/alerts/${toBo!.requestId}/acknowledge`)).statusCode, 200)
  const answered = (await call(viewer!, 'GET', `${url}/responder-requests`)).json().data as Request[]
  t.match(answered[0], { status: 'acknowledged', acknowledgedBy: { userId: bo!.userId, email: bo!.email } })
  t.ok(answered[0]!.acknowledgedAt)
  t.match((await call(viewer!, 'GET', url)).json().responders, [{ userId: bo!.userId, via: 'request' }])

  await call(ada!, 'PATCH', url, { status: 'investigating' })
  const stillAsked = (await call(viewer!, 'GET', `${url}/responder-requests`)).json().data as Request[]
  t.same(
    stillAsked.map((request) => request.status),
    ['acknowledged', 'open', 'open'],
    'acknowledging the incident answers no one’s request for them',
  )
  t.match(
    (await call(viewer!, 'GET', `${base}/alerts/${toPolicy!.requestId}/notifications`)).json().escalation,
    { state: 'active', step: 1 },
    'the policy pages its one step and waits out its 15 minutes',
  )
  t.ok(toTeam)

  const timeline = (await call(viewer!, 'GET', `${url}/timeline`)).json().data as Array<{ kind: string; data: { requestIds?: string[] } }>
  t.equal(timeline.find((entry) => entry.kind === 'responders_requested')?.data.requestIds?.length, 3)
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', incident.id).execute()
  t.ok(
    audit.some((entry) => entry.action === 'incident.responders_requested'),
    'audited',
  )

  await call(ada!, 'PATCH', url, { status: 'resolved' })
  const closed = (await call(viewer!, 'GET', `${url}/responder-requests`)).json().data as Request[]
  t.ok(
    listed.every((request) => request.paged.some((attempt) => attempt.channel === 'email')),
    'each by e-mail among their channels',
  )
  t.same(
    closed.map((request) => request.status),
    ['resolved', 'resolved', 'resolved'],
    'resolving the incident resolves its requests',
  )
  const late = await call(ada!, 'POST', `${url}/responder-requests`, { targets: [{ type: 'user', id: bo!.userId }] })
  t.equal(late.statusCode, 409)
})

t.test('reassigning pages the new assignee, makes a person commander and puts the incident back in triage', async (t) => {
  const incident = (await call(ada!, 'POST', `${base}/incidents`, { title: 'Refunds stuck', severity: 'SEV3' })).json()
  const url = `${base}/incidents/${incident.id}`
  await call(ada!, 'PATCH', url, { status: 'identified' })
  const before = pagesTo(cy!.email)

  const reassigned = await call(ada!, 'POST', `${url}/reassign`, { target: { type: 'user', id: cy!.userId } })
  t.equal(reassigned.statusCode, 200)
  t.match(reassigned.json(), { status: 'triage', roles: [{ role: 'commander', userId: cy!.userId }] })
  await until('the new assignee paged', () => pagesTo(cy!.email) === before + 1)
  const timeline = (await call(viewer!, 'GET', `${url}/timeline`)).json().data as Array<{ kind: string }>
  t.ok(
    ['reassigned', 'role_assigned', 'status_changed', 'responders_requested'].every((kind) =>
      timeline.some((entry) => entry.kind === kind),
    ),
  )

  const toPolicy = await call(ada!, 'POST', `${url}/reassign`, { target: { type: 'escalation_policy', id: policy.id } })
  t.match(toPolicy.json(), { roles: [{ role: 'commander', userId: cy!.userId }] }, 'a policy leaves the commander as is')
  t.equal((await call(ada!, 'POST', `${url}/reassign`, { target: { type: 'user', id: randomUUID() } })).statusCode, 400)

  await call(ada!, 'PATCH', url, { status: 'resolved' })
  t.equal((await call(ada!, 'POST', `${url}/reassign`, { target: { type: 'user', id: cy!.userId } })).statusCode, 409)
})

t.test('a person is paged once per open request, and asked at most six times an hour in the organization', async (t) => {
  const open = async (title: string) => (await call(ada!, 'POST', `${base}/incidents`, { title, severity: 'SEV3' })).json().id as string
  const ask = (incidentId: string, targets: object[]) =>
    call(ada!, 'POST', `${base}/incidents/${incidentId}/responder-requests`, { targets })
  const toCy = { type: 'user', id: cy!.userId }
  const first = await open('Webhooks delayed')

  const twice = await ask(first, [toCy, { type: 'team', id: team.id }, toCy])
  t.equal(twice.statusCode, 400, 'one person named twice in one request')
  t.match(twice.json().message, /targets\/2\/id names the same user as targets\/0\/id/)

  t.equal((await ask(first, [toCy])).statusCode, 201)
  const again = await ask(first, [toCy])
  t.equal(again.statusCode, 201)
  t.equal((again.json().data as Request[]).length, 1, 'an open request is not made, nor paged, again')

  // Across incidents, the organization may ask one person six times an hour.
  const asked = async () =>
    Number(
      (
        await db
          .selectFrom('divinux.incidentAlerts')
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .where('rule', '=', 'responder_request')
          .where(sql<string>`matched -> 'target' ->> 'id'`, '=', cy!.userId)
          .executeTakeFirstOrThrow()
      ).count,
    )
  while ((await asked()) < 6) t.equal((await ask(await open('Another fire'), [toCy])).statusCode, 201)
  const refused = await ask(await open('One fire too many'), [toCy])
  t.equal(refused.statusCode, 429)
  t.match(refused.json(), { code: 'RATE_LIMITED', message: /asked for help 6 times in the last 60 minutes/ })
  t.equal(await asked(), 6, 'nothing was made')
})
