import { sql } from 'kysely'
import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'hush', { manager: 'manager', ada: 'responder', viewer: 'viewer' })
const [manager, ada, viewer] = ['manager', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

async function created(who: Who, url: string, payload: object): Promise<{ id: string; [key: string]: unknown }> {
  const response = await call(who, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}

type Notifications = { escalation: { state: string; note: string | null } | null; data: Array<{ step: number; channel: string }> }
const notifications = async (alertId: string): Promise<Notifications> =>
  (await call(viewer!, 'GET', `${base}/alerts/${alertId}/notifications`)).json()
const settled = (alertId: string) =>
  until(`${alertId} to leave pending`, async () => {
    const found = await notifications(alertId)
    return found.escalation?.state !== 'pending' && found
  })
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

const policy = await created(manager!, `${base}/escalation-policies`, {
  name: 'Ada',
  steps: [
    { delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] },
    { delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] },
  ],
})
const config = await created(manager!, `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })
const ingest = async (event: object): Promise<string> => {
  const response = await app.inject({
    method: 'POST',
    url: config.ingestPath as string,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(event),
  })
  return response.json().alertId
}

let maintenanceId = ''
let heldAlert = ''

t.test('silences are created with matchers and an end; bad ones are refused naming the field', async (t) => {
  const cases: Array<[string, Who, object, number, RegExp?]> = [
    ['a viewer', viewer!, { comment: 'x', matchers: { services: ['db'] }, endsAt: inMinutes(60) }, 403],
    ['no matcher', manager!, { comment: 'x', matchers: {}, endsAt: inMinutes(60) }, 400, /matchers/],
    [
      'an end in the past',
      manager!,
      { comment: 'x', matchers: { services: ['db'] }, endsAt: inMinutes(-1) },
      400,
      /endsAt must be in the future/,
    ],
    [
      'an end before the start',
      manager!,
      { comment: 'x', matchers: { services: ['db'] }, startsAt: inMinutes(90), endsAt: inMinutes(60) },
      400,
      /endsAt must be after startsAt/,
    ],
    ['no comment', manager!, { comment: ' ', matchers: { services: ['db'] }, endsAt: inMinutes(60) }, 400, /comment/],
  ]
  for (const [what, who, payload, status, message] of cases) {
    const response = await call(who, 'POST', `${base}/silences`, payload)
    t.equal(response.statusCode, status, what)
    if (message) t.match(response.json().message, message, what)
  }
  const maintenance = await created(manager!, `${base}/silences`, {
    comment: 'Database maintenance',
    matchers: { services: ['db'] },
    endsAt: inMinutes(60),
  })
  maintenanceId = maintenance.id
  t.match(maintenance, { state: 'active', matchers: { services: ['db'] }, comment: 'Database maintenance' })
  await created(manager!, `${base}/silences`, {
    comment: 'Tonight',
    matchers: { priorities: ['P5'] },
    startsAt: inMinutes(600),
    endsAt: inMinutes(660),
  })
  t.same(
    (await call(viewer!, 'GET', `${base}/silences?state=active`)).json().data.map((silence: { comment: string }) => silence.comment),
    ['Database maintenance'],
  )
  t.equal((await call(viewer!, 'GET', `${base}/silences?state=pending`)).json().meta.total, 1)
})

t.test('a silenced alert is stored and shown but pages no one; others still page', async (t) => {
  heldAlert = await ingest({ title: 'Replication lag', service: 'db' })
  const held = await settled(heldAlert)
  t.match(held, { escalation: { state: 'silenced', note: /Database maintenance/ }, data: [] })
  t.equal((await call(viewer!, 'GET', `${base}/alerts/${heldAlert}`)).json().status, 'open', 'the alert is there')
  const timeline = (await call(viewer!, 'GET', `${base}/alerts/${heldAlert}/events`))
    .json()
    .data.map((event: { type: string }) => event.type)
  t.same(timeline, ['created', 'silenced'])

  const other = await ingest({ title: 'API errors', service: 'api' })
  await until('the api alert to page', async () => (await notifications(other)).data.length > 0)
})

t.test('ending a silence early pages what it held once, unless acknowledged meanwhile', async (t) => {
  const acknowledgedMeanwhile = await ingest({ title: 'Vacuum slow', service: 'db' })
  await settled(acknowledgedMeanwhile)
  t.equal((await call(ada!, 'POST', `${base}/alerts/${acknowledgedMeanwhile}/acknowledge`)).statusCode, 200)

  t.equal((await call(manager!, 'DELETE', `${base}/silences/${maintenanceId}`)).statusCode, 204)
  const released = await until('the held alert to page', async () => {
    const found = await notifications(heldAlert)
    return found.data.length > 0 && found
  })
  t.equal(released.escalation?.state, 'active')
  t.same([...new Set(released.data.map((attempt) => attempt.step))], [0], 'from the first step, once')
  t.same((await notifications(acknowledgedMeanwhile)).data, [])
  t.equal((await notifications(acknowledgedMeanwhile)).escalation?.state, 'acknowledged', 'not paged retroactively')
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', maintenanceId).orderBy('createdAt').execute()
  t.same(
    audit.map((row) => row.action),
    ['silence.created', 'silence.deleted'],
  )
})

t.test('a silence that runs out lets go at its end; one extended meanwhile keeps holding', async (t) => {
  const short = await created(manager!, `${base}/silences`, {
    comment: 'Short',
    matchers: { labels: { env: 'staging' } },
    endsAt: new Date(Date.now() + 2_000).toISOString(),
  })
  const extended = await created(manager!, `${base}/silences`, {
    comment: 'Extended',
    matchers: { labels: { env: 'qa' } },
    endsAt: new Date(Date.now() + 2_000).toISOString(),
  })
  const staging = await ingest({ title: 'Staging down', labels: { env: 'staging' } })
  const qa = await ingest({ title: 'QA down', labels: { env: 'qa' } })
  t.equal((await settled(staging)).escalation?.state, 'silenced')
  t.equal((await settled(qa)).escalation?.state, 'silenced')
  const longer = await call(manager!, 'PATCH', `${base}/silences/${extended.id}`, { endsAt: inMinutes(60) })
  t.equal(longer.statusCode, 200)

  await until('the short silence to let go', async () => (await notifications(staging)).data.length > 0)
  // The extended silence's first end job has run by now too (both were due at the same moment).
  await until('every due end job', async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pgboss.job
      where name = 'alerting.silence-ended' and state in ('created', 'retry', 'active') and start_after <= now()`.execute(db)
    return rows[0]?.n === 0
  })
  t.match(await notifications(qa), { escalation: { state: 'silenced' }, data: [] }, 'still held')
  t.equal((await call(viewer!, 'GET', `${base}/silences/${short.id}`)).json().state, 'expired')
  t.equal(
    (await call(manager!, 'PATCH', `${base}/silences/${short.id}`, { comment: 'again' })).statusCode,
    409,
    'an expired silence stays as it was',
  )

  const now = await call(manager!, 'PATCH', `${base}/silences/${extended.id}`, { endsAt: new Date(Date.now() + 100).toISOString() })
  t.equal(now.statusCode, 200)
  await until('the extended silence to let go once shortened', async () => (await notifications(qa)).data.length > 0)
})

t.test('an escalating alert that a new silence matches pages no more at its next step', async (t) => {
  const alertId = await ingest({ title: 'Cache cold', service: 'cache' })
  await until('the first page', async () => (await notifications(alertId)).data.length > 0)
  const before = (await notifications(alertId)).data.length
  await created(manager!, `${base}/silences`, { comment: 'Cache rebuild', matchers: { services: ['cache'] }, endsAt: inMinutes(30) })
  await sql`update pgboss.job set start_after = now() where name = 'alerting.escalation-step' and state in ('created', 'retry')`.execute(db)
  const held = await until('the next step to find the silence', async () => {
    const found = await notifications(alertId)
    return found.escalation?.state === 'silenced' && found
  })
  t.equal(held.data.length, before, 'nothing more was sent')
})

t.test('silences change what they match and their comment; bad changes and unknown ids are refused', async (t) => {
  const silence = await created(manager!, `${base}/silences`, {
    comment: 'Patch night',
    matchers: { priorities: ['P5'] },
    endsAt: inMinutes(120),
  })
  const changed = await call(manager!, 'PATCH', `${base}/silences/${silence.id}`, {
    comment: ' Patch night, part 2 ',
    matchers: { services: ['batch'] },
  })
  t.match(changed.json(), { comment: 'Patch night, part 2', matchers: { services: ['batch'] } })
  const backwards = await call(manager!, 'PATCH', `${base}/silences/${silence.id}`, { startsAt: inMinutes(200) })
  t.equal(backwards.statusCode, 400)
  t.match(backwards.json().message, /startsAt must leave endsAt after startsAt/)
  t.equal((await call(viewer!, 'GET', `${base}/silences/not-a-uuid`)).statusCode, 404)
  t.equal((await call(manager!, 'DELETE', `${base}/silences/${silence.id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${base}/silences/${silence.id}`)).statusCode, 404)
  t.ok((await call(viewer!, 'GET', `${base}/silences?state=expired`)).json().meta.total >= 1)
})
