import { randomUUID } from 'node:crypto'
import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'rota', {
  manager: 'manager',
  ada: 'responder',
  bo: 'responder',
  viewer: 'viewer',
  bystander: null,
})
const [manager, ada, bo, viewer, bystander, stranger] = ['manager', 'ada', 'bo', 'viewer', 'bystander', 'stranger'].map(person)
const schedules = `/api/v1/organizations/${orgId}/schedules`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const weekly = (users: string[], overrides: object = {}) => ({
  name: 'Primary',
  start: '2026-03-23',
  handoffTime: '09:00',
  turn: { length: 1, unit: 'weeks' },
  users,
  ...overrides,
})

async function counts() {
  const count = async (table: 'divinux.schedules' | 'divinux.scheduleOverrides') =>
    Number((await db.selectFrom(table).select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  const audits = await db
    .selectFrom('core.auditLogs')
    .select(db.fn.countAll<number>().as('n'))
    .where('entityType', '=', 'schedule')
    .executeTakeFirstOrThrow()
  return { schedules: await count('divinux.schedules'), overrides: await count('divinux.scheduleOverrides'), audits: Number(audits.n) }
}

let berlinId = ''

t.test('a manager creates a Berlin schedule; viewers read it; others get 403 or 404', async (t) => {
  const created = await call(manager!, 'POST', schedules, {
    name: 'Platform primary',
    timeZone: 'Europe/Berlin',
    layers: [weekly([ada!.userId, bo!.userId])],
  })
  t.equal(created.statusCode, 201, created.body)
  berlinId = created.json().id
  t.match(created.json(), {
    name: 'Platform primary',
    timeZone: 'Europe/Berlin',
    description: null,
    layers: [{ name: 'Primary', users: [ada!.userId, bo!.userId], restriction: null }],
  })
  const audit = await db.selectFrom('core.auditLogs').selectAll().where('entityId', '=', berlinId).executeTakeFirstOrThrow()
  t.match(audit, { action: 'schedule.created', product: 'alerting', actorUserId: manager!.userId })

  t.match((await call(viewer!, 'GET', schedules)).json(), { data: [{ id: berlinId, layerCount: 1 }], meta: { total: 1 } })
  t.equal((await call(viewer!, 'GET', `${schedules}/${berlinId}`)).statusCode, 200)
  t.equal((await call(bystander!, 'GET', schedules)).statusCode, 403)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/schedules/${berlinId}`)).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${schedules}/${randomUUID()}`)).statusCode, 404)
  t.equal((await call(viewer!, 'POST', schedules, { name: 'X', timeZone: 'UTC', layers: [weekly([ada!.userId])] })).statusCode, 403)
})

t.test('shifts across the spring change keep the 09:00 Berlin hand-off', async (t) => {
  const response = await call(viewer!, 'GET', `${schedules}/${berlinId}/shifts?from=2026-03-23T00:00:00Z&to=2026-04-06T12:00:00Z`)
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    from: '2026-03-23T00:00:00.000Z',
    to: '2026-04-06T12:00:00.000Z',
    timeZone: 'Europe/Berlin',
    data: [
      { userId: ada!.userId, email: 'ada@rota.example', start: '2026-03-23T08:00:00.000Z', end: '2026-03-30T07:00:00.000Z' },
      { userId: bo!.userId, email: 'bo@rota.example', start: '2026-03-30T07:00:00.000Z', end: '2026-04-06T07:00:00.000Z' },
      { userId: ada!.userId, email: 'ada@rota.example', start: '2026-04-06T07:00:00.000Z', end: '2026-04-06T12:00:00.000Z' },
    ],
  })
  const autumn = await call(viewer!, 'GET', `${schedules}/${berlinId}/shifts?from=2026-10-19T00:00:00Z&to=2026-10-27T00:00:00Z`)
  t.same(
    autumn.json().data.map((shift: { start: string }) => shift.start),
    ['2026-10-19T00:00:00.000Z', '2026-10-19T07:00:00.000Z', '2026-10-26T08:00:00.000Z'],
    'and across the autumn change: 09:00 CEST, then 09:00 CET',
  )
})

t.test('on-call answers who is on call at a moment, with the merged shift', async (t) => {
  const response = await call(viewer!, 'GET', `${schedules}/${berlinId}/on-call?at=2026-03-31T10:00:00Z`)
  t.same(response.json(), {
    at: '2026-03-31T10:00:00.000Z',
    onCall: { userId: bo!.userId, email: 'bo@rota.example', start: '2026-03-30T07:00:00.000Z', end: '2026-04-06T07:00:00.000Z' },
  })
  const before = await call(viewer!, 'GET', `${schedules}/${berlinId}/on-call?at=2026-01-01T00:00:00Z`)
  t.same(before.json(), { at: '2026-01-01T00:00:00.000Z', onCall: null }, 'nobody before the rotation starts')
  const now = await call(viewer!, 'GET', `${schedules}/${berlinId}/on-call`)
  t.equal(now.statusCode, 200, 'at defaults to now')
})

t.test('overrides replace whoever is on call; overlapping ones are refused; removal restores the rotation', async (t) => {
  const overrides = `${schedules}/${berlinId}/overrides`
  const created = await call(manager!, 'POST', overrides, {
    userId: bo!.userId,
    start: '2026-03-24T10:00:00Z',
    end: '2026-03-24T18:00:00Z',
  })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { userId: bo!.userId, email: 'bo@rota.example', start: '2026-03-24T10:00:00.000Z' })
  const onCall = await call(viewer!, 'GET', `${schedules}/${berlinId}/on-call?at=2026-03-24T12:00:00Z`)
  t.match(onCall.json().onCall, { userId: bo!.userId, start: '2026-03-24T10:00:00.000Z', end: '2026-03-24T18:00:00.000Z' })

  const before = await counts()
  const refused: Array<[string, object, RegExp]> = [
    [
      'an overlapping override',
      { userId: ada!.userId, start: '2026-03-24T17:00:00Z', end: '2026-03-24T20:00:00Z' },
      /body\/start overlaps override/,
    ],
    [
      'an end before the start',
      { userId: ada!.userId, start: '2026-03-25T17:00:00Z', end: '2026-03-25T10:00:00Z' },
      /body\/end must be after start/,
    ],
    [
      'a user of another organization',
      { userId: stranger!.userId, start: '2026-03-26T10:00:00Z', end: '2026-03-26T11:00:00Z' },
      /body\/userId/,
    ],
  ]
  for (const [what, payload, message] of refused) {
    const response = await call(manager!, 'POST', overrides, payload)
    t.equal(response.statusCode, 400, what)
    t.match(response.json().message, message, what)
  }
  t.same(await counts(), before, 'nothing was written')
  t.equal((await call(viewer!, 'GET', overrides)).json().data.length, 1)
  t.equal((await call(viewer!, 'GET', `${overrides}?from=2026-04-01T00:00:00Z`)).json().data.length, 0, 'filtered by range')

  t.equal((await call(manager!, 'DELETE', `${overrides}/${created.json().id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${overrides}/${created.json().id}`)).statusCode, 404, 'once')
  const restored = await call(viewer!, 'GET', `${schedules}/${berlinId}/on-call?at=2026-03-24T12:00:00Z`)
  t.equal(restored.json().onCall.userId, ada!.userId)
  const actions = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', berlinId).orderBy('createdAt').execute()
  t.same(
    actions.map((row) => row.action),
    ['schedule.created', 'schedule.override_created', 'schedule.override_deleted'],
  )
})

t.test('New York: a business-hours layer above a weekly one, across the March change', async (t) => {
  const created = await call(manager!, 'POST', schedules, {
    name: 'New York',
    timeZone: 'America/New_York',
    layers: [
      weekly([bo!.userId], { name: 'Nights and weekends', start: '2026-03-02' }),
      weekly([ada!.userId], {
        name: 'Business hours',
        start: '2026-03-02',
        restriction: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' },
      }),
    ],
  })
  t.equal(created.statusCode, 201)
  const shifts = await call(viewer!, 'GET', `${schedules}/${created.json().id}/shifts?from=2026-03-06T12:00:00Z&to=2026-03-09T23:00:00Z`)
  t.same(
    shifts.json().data.map((shift: { email: string; start: string; end: string }) => [shift.email, shift.start, shift.end]),
    [
      ['bo@rota.example', '2026-03-06T12:00:00.000Z', '2026-03-06T14:00:00.000Z'],
      ['ada@rota.example', '2026-03-06T14:00:00.000Z', '2026-03-06T22:00:00.000Z'],
      ['bo@rota.example', '2026-03-06T22:00:00.000Z', '2026-03-09T13:00:00.000Z'],
      ['ada@rota.example', '2026-03-09T13:00:00.000Z', '2026-03-09T21:00:00.000Z'],
      ['bo@rota.example', '2026-03-09T21:00:00.000Z', '2026-03-09T23:00:00.000Z'],
    ],
    '09:00 EST is 14:00 UTC; 09:00 EDT is 13:00 UTC',
  )
})

t.test('bad schedules and ranges answer 400 naming the field and change nothing', async (t) => {
  const before = await counts()
  const cases: Array<[string, object, number, RegExp]> = [
    ['no layers', { name: 'X', timeZone: 'UTC', layers: [] }, 400, /layers/],
    ['a rotation without users', { name: 'X', timeZone: 'UTC', layers: [weekly([])] }, 400, /layers\/0\/users/],
    ['an unknown user', { name: 'X', timeZone: 'UTC', layers: [weekly([ada!.userId, randomUUID()])] }, 400, /layers\/0\/users\/1/],
    ['a user of another organization', { name: 'X', timeZone: 'UTC', layers: [weekly([stranger!.userId])] }, 400, /layers\/0\/users\/0/],
    ['an unknown time zone', { name: 'X', timeZone: 'Mars/Olympus', layers: [weekly([ada!.userId])] }, 400, /timeZone/],
    [
      'a turn of no length',
      { name: 'X', timeZone: 'UTC', layers: [weekly([ada!.userId], { turn: { length: 0, unit: 'days' } })] },
      400,
      /turn\/length/,
    ],
    ['a bad hand-off time', { name: 'X', timeZone: 'UTC', layers: [weekly([ada!.userId], { handoffTime: '25:00' })] }, 400, /handoffTime/],
    ['a taken name', { name: 'platform PRIMARY', timeZone: 'UTC', layers: [weekly([ada!.userId])] }, 409, /exists/],
  ]
  for (const [what, payload, status, message] of cases) {
    const response = await call(manager!, 'POST', schedules, payload)
    t.equal(response.statusCode, status, what)
    t.match(response.json().message, message, what)
  }
  const patch = await call(manager!, 'PATCH', `${schedules}/${berlinId}`, { layers: [weekly([bystander!.userId, stranger!.userId])] })
  t.equal(patch.statusCode, 400)
  t.match(patch.json().message, /layers\/0\/users\/1/)
  const shifts = `${schedules}/${berlinId}/shifts`
  t.match(
    (await call(viewer!, 'GET', `${shifts}?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z`)).json().message,
    /querystring\/to must be after from/,
  )
  t.match((await call(viewer!, 'GET', `${shifts}?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z`)).json().message, /at most 93 days/)
  t.equal((await call(viewer!, 'GET', `${shifts}?from=yesterday&to=2026-06-01T00:00:00Z`)).statusCode, 400)
  t.same(await counts(), before, 'nothing was written')
})

t.test('a schedule is renamed, its layers replaced, then deleted with its overrides; each change audited', async (t) => {
  const changed = await call(manager!, 'PATCH', `${schedules}/${berlinId}`, {
    name: 'Platform',
    layers: [weekly([bo!.userId], { turn: { length: 2, unit: 'days' } })],
  })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { name: 'Platform', layers: [{ users: [bo!.userId], turn: { length: 2, unit: 'days' } }] })
  await call(manager!, 'POST', `${schedules}/${berlinId}/overrides`, {
    userId: ada!.userId,
    start: '2026-05-01T00:00:00Z',
    end: '2026-05-02T00:00:00Z',
  })
  t.equal((await call(manager!, 'DELETE', `${schedules}/${berlinId}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${schedules}/${berlinId}`)).statusCode, 404)
  const overrides = await db.selectFrom('divinux.scheduleOverrides').select('id').where('scheduleId', '=', berlinId).execute()
  t.same(overrides, [], 'its overrides went with it')
  const actions = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', berlinId).orderBy('createdAt').execute()
  t.same(actions.map((row) => row.action).slice(-3), ['schedule.updated', 'schedule.override_created', 'schedule.deleted'])
})

t.test('each user’s shifts as an iCalendar feed, by a token they rotate or revoke', async (t) => {
  const daily = await call(manager!, 'POST', schedules, {
    name: 'Daily',
    timeZone: 'Europe/Berlin',
    layers: [weekly([ada!.userId, bo!.userId], { start: '2026-01-01', turn: { length: 1, unit: 'days' } })],
  })
  t.equal(daily.statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/users/me/on-call-feed' })).statusCode, 401, 'only the signed-in user makes one')
  t.same((await call(ada!, 'GET', '/api/v1/users/me/on-call-feed')).json(), { active: false, createdAt: null, rotatedAt: null })

  const made = await call(ada!, 'POST', '/api/v1/users/me/on-call-feed')
  t.equal(made.statusCode, 201)
  const { url, token } = made.json()
  t.match(url, /^http:\/\/localhost:\d+\/api\/v1\/users\/me\/on-call\.ics\?token=ics_[A-Za-z0-9_-]{43}$/)
  const feedUrl = (value: string) => `/api/v1/users/me/on-call.ics?token=${value}`
  const feed = await app.inject({ method: 'GET', url: feedUrl(token) })
  t.equal(feed.statusCode, 200)
  t.match(feed.headers['content-type'], /^text\/calendar/)
  t.match(feed.body, /^BEGIN:VCALENDAR/)
  const events = feed.body.match(/BEGIN:VEVENT/g) ?? []
  t.ok(events.length >= 30, `every other day for 67 days is her turn (${events.length} shifts)`)
  t.match(feed.body, /SUMMARY:On call: Daily/)

  const from = new Date(Date.now() - 7 * 86_400_000).toISOString()
  const to = new Date(Date.now() + 60 * 86_400_000).toISOString()
  const shifts = (await call(viewer!, 'GET', `${schedules}/${daily.json().id}/shifts?from=${from}&to=${to}`)).json().data
  const hers = shifts.filter((shift: { userId: string }) => shift.userId === ada!.userId).length
  const daysShifts = (feed.body.match(/SUMMARY:On call: Daily/g) ?? []).length
  t.ok(Math.abs(daysShifts - hers) <= 1, `the feed holds her shifts of the schedule, not Bo’s (${daysShifts}, ${hers})`)
  t.match(feed.body, /SUMMARY:On call: New York/, 'and those of her other schedules')

  const rotated = await call(ada!, 'POST', '/api/v1/users/me/on-call-feed')
  t.equal((await app.inject({ method: 'GET', url: feedUrl(token) })).statusCode, 404, 'the old URL stops working')
  t.equal((await app.inject({ method: 'GET', url: feedUrl(rotated.json().token) })).statusCode, 200)
  t.equal((await call(ada!, 'GET', '/api/v1/users/me/on-call-feed')).json().active, true)
  t.equal((await call(ada!, 'DELETE', '/api/v1/users/me/on-call-feed')).statusCode, 204)
  t.equal((await app.inject({ method: 'GET', url: feedUrl(rotated.json().token) })).statusCode, 404, 'revoked')
  t.equal((await call(ada!, 'DELETE', '/api/v1/users/me/on-call-feed')).statusCode, 404)
})
