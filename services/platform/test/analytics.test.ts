import { randomUUID } from 'node:crypto'
import t from 'tap'
import { sql } from 'kysely'
import { ANALYTICS_EVENTS, maintainAnalytics, REDACTED } from '@svc/analytics'
import { monthlyPartitions } from '@svc/db'
import { buildApp } from '@svc/platform'
import { acceptInvitationOf, startTestService } from '@svc/testkit'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db

const owner = await service.signIn('owner@analytics.example')
const colleague = await service.signIn('colleague@analytics.example')
const stranger = await service.signIn('stranger@elsewhere.example')
const createOrganization = async (headers: { authorization: string }, slug: string) =>
  (await app.inject({ method: 'POST', url: '/api/v1/organizations', headers, payload: { name: slug, slug } })).json<{ id: string }>().id
const orgId = await createOrganization(owner.headers, 'telemetry')
const otherOrgId = await createOrganization(stranger.headers, 'elsewhere')
await app.inject({
  method: 'POST',
  url: `/api/v1/organizations/${orgId}/members`,
  headers: owner.headers,
  payload: { email: colleague.email, role: 'member' },
})
await acceptInvitationOf(app, colleague)

const base = `/api/v1/organizations/${orgId}`
const track = (payload: object, headers = owner.headers) => app.inject({ method: 'POST', url: `${base}/analytics/track`, headers, payload })
const batch = (payload: object, headers = owner.headers) => app.inject({ method: 'POST', url: `${base}/analytics/batch`, headers, payload })
const stored = async (messageId: string) =>
  db.selectFrom('core.analyticsEvents').selectAll().where('organizationId', '=', orgId).where('messageId', '=', messageId).execute()
const today = new Date().toISOString().slice(0, 10)
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)

t.test('one track event is stored once, however often it is retried', async (t) => {
  const event = {
    type: 'track',
    event: 'Dashboard Viewed',
    messageId: 'msg-1',
    timestamp: new Date().toISOString(),
    properties: { tab: 'alerts' },
  }
  const first = await track(event)
  t.equal(first.statusCode, 200)
  t.match(first.json(), { stored: 1, duplicates: 0, rejected: 0, events: [{ index: 0, messageId: 'msg-1', status: 'stored' }] })
  const retry = await track(event)
  t.match(retry.json(), { stored: 0, duplicates: 1, events: [{ status: 'duplicate' }] })
  const rows = await stored('msg-1')
  t.equal(rows.length, 1)
  t.match(rows[0], { event: 'Dashboard Viewed', userId: owner.userId, source: 'client', properties: { tab: 'alerts' } })
})

t.test('a malformed single event is a 400 naming the field, and stores nothing', async (t) => {
  const cases: Array<[object, string]> = [
    [{ properties: {} }, 'event'],
    [{ event: 'X', timestamp: 'yesterday' }, 'timestamp'],
    [{ event: 'X', type: 'identify' }, 'type'],
    [{ event: 'X', userId: randomUUID(), messageId: 'not-mine' }, 'userId'],
  ]
  for (const [payload, field] of cases) {
    const answer = await track(payload)
    t.equal(answer.statusCode, 400, JSON.stringify(payload))
    t.match(answer.json(), { statusCode: 400, code: 'VALIDATION_FAILED', details: [{ field: new RegExp(field) }] })
    t.match(answer.body, field)
  }
  t.equal((await stored('not-mine')).length, 0)
})

t.test('a batch keeps the good events and says why each bad one was refused', async (t) => {
  const now = Date.now()
  const answer = await batch({
    batch: [
      { event: 'Alert Opened', messageId: 'b-1', timestamp: new Date(now).toISOString() },
      { messageId: 'b-2' },
      { event: 'Alert Opened', messageId: 'b-1', timestamp: new Date(now).toISOString() },
      { event: 'Old Thing', messageId: 'b-3', timestamp: new Date(now - 400 * 86_400_000).toISOString() },
      { event: 'Future Thing', messageId: 'b-4', timestamp: new Date(now + 3 * 86_400_000).toISOString() },
      { event: 'Big', messageId: 'b-5', properties: { blob: 'x'.repeat(9_000) } },
      { event: 'Search Run', messageId: 'b-6', properties: { query: 'db down', filters: { count: 3 } } },
      'not an object',
    ],
  })
  t.equal(answer.statusCode, 200)
  const result = answer.json()
  t.match(result, { stored: 2, duplicates: 1, rejected: 5 })
  t.same(
    result.events.map((outcome: { status: string }) => outcome.status),
    ['stored', 'rejected', 'duplicate', 'rejected', 'rejected', 'rejected', 'stored', 'rejected'],
  )
  t.match(result.events[1].error, /^event: /)
  t.match(result.events[3].error, /older than the analytics retention/)
  t.match(result.events[4].error, /ahead of the server/)
  t.match(result.events[5].error, /larger than 8192 bytes/)
  t.equal(result.events[7].messageId, null)
  t.equal((await stored('b-1')).length, 1)
  t.equal((await stored('b-3')).length + (await stored('b-4')).length + (await stored('b-5')).length, 0)
})

t.test("sentAt corrects the sender's clock, as Segment does", async (t) => {
  const senderClock = Date.now() + 3_600_000 // an hour fast
  await batch({
    sentAt: new Date(senderClock).toISOString(),
    batch: [{ event: 'Page Viewed', messageId: 'skewed', timestamp: new Date(senderClock - 60_000).toISOString() }],
  })
  const [row] = await stored('skewed')
  const lag = Date.now() - row!.occurredAt.getTime()
  t.ok(lag > 50_000 && lag < 70_000, `stored a minute ago, not an hour ahead (${lag} ms)`)
})

t.test('values that look like e-mail addresses or credentials are replaced unless declared', async (t) => {
  const jwt = service.token(owner.email)
  const answer = await track({
    event: 'Integration Connected',
    messageId: 'pii-1',
    properties: {
      contact: 'jane.doe@example.com',
      nested: { apiKey: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', note: 'Bearer abc.def' },
      token: jwt,
      invitee: 'ops@example.com',
      checkId: randomUUID(),
      commit: 'a'.repeat(40),
      plan: 'team',
    },
    context: { declaredPii: ['invitee'], ip: '203.0.113.9', library: { name: 'web', version: '1.0.0' } },
  })
  t.equal(answer.statusCode, 200)
  t.same(answer.json().events[0].redacted.sort(), [
    'properties/contact',
    'properties/nested/apiKey',
    'properties/nested/note',
    'properties/token',
  ])
  const [row] = await stored('pii-1')
  t.match(row!.properties, {
    contact: REDACTED,
    nested: { apiKey: REDACTED, note: REDACTED },
    token: REDACTED,
    invitee: 'ops@example.com',
    plan: 'team',
    commit: 'a'.repeat(40),
  })
  t.same(row!.context, { library: { name: 'web', version: '1.0.0' }, declaredPii: ['invitee'] }, 'only library and declaredPii are kept')
})

t.test('the batch limits: events and bytes', async (t) => {
  const tooMany = await batch({ batch: Array.from({ length: 501 }, (_, index) => ({ event: 'E', messageId: `many-${index}` })) })
  t.equal(tooMany.statusCode, 400)
  t.match(tooMany.body, 'batch')
  const tooLarge = await batch({
    batch: Array.from({ length: 100 }, (_, index) => ({ event: 'E', properties: { pad: 'y'.repeat(6_000) }, messageId: `big-${index}` })),
  })
  t.equal(tooLarge.statusCode, 413)
  t.equal((await stored('many-0')).length + (await stored('big-0')).length, 0)
})

t.test('only members send and read, and only their own organization', async (t) => {
  t.equal((await track({ event: 'X' }, stranger.headers)).statusCode, 404)
  t.equal(
    (await app.inject({ method: 'GET', url: `${base}/usage/events?from=${today}&to=${tomorrow}`, headers: stranger.headers })).statusCode,
    404,
  )
  t.equal((await app.inject({ method: 'POST', url: `${base}/analytics/track`, payload: { event: 'X' } })).statusCode, 401)
  const colleagueSends = await track({ event: 'Colleague Clicked', messageId: 'colleague-1' }, colleague.headers)
  t.equal(colleagueSends.statusCode, 200)
  t.equal((await stored('colleague-1'))[0]?.userId, colleague.userId, "a member's events are theirs")
})

t.test('our own services record product events as things happen', async (t) => {
  const events = await db
    .selectFrom('core.analyticsEvents')
    .select(['event', 'userId', 'properties'])
    .where('organizationId', '=', orgId)
    .where('source', '=', 'server')
    .orderBy('occurredAt')
    .execute()
  t.match(events, [
    { event: 'Organization Created', userId: owner.userId },
    { event: 'Member Added', userId: owner.userId, properties: { role: 'member', via: 'platform' } },
  ])
  const other = await db.selectFrom('core.analyticsEvents').select('event').where('organizationId', '=', otherOrgId).execute()
  t.same(other, [{ event: 'Organization Created' }])
})

t.test('usage summaries count events and active users by day and by week', async (t) => {
  const dayMs = 86_400_000
  const monday = new Date('2026-11-16T12:00:00Z') // a Monday inside retention only relative to now
  void monday
  const start = new Date(Date.now() - 9 * dayMs)
  const at = (days: number) => new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + days, 10)).toISOString()
  await batch({
    batch: [
      { event: 'Check Viewed', messageId: 'u-1', timestamp: at(0) },
      { event: 'Check Viewed', messageId: 'u-2', timestamp: at(0) },
      { event: 'Check Viewed', messageId: 'u-3', timestamp: at(2), anonymousId: 'anon-7' },
      { event: 'Search Run', messageId: 'u-4', timestamp: at(8) },
    ],
  })
  await batch({ batch: [{ event: 'Check Viewed', messageId: 'u-5', timestamp: at(2) }] }, colleague.headers)
  const from = at(0).slice(0, 10)
  const to = at(9).slice(0, 10)
  const daily = await app.inject({
    method: 'GET',
    url: `${base}/usage/events?from=${from}&to=${to}&event=Check%20Viewed`,
    headers: colleague.headers,
  })
  t.equal(daily.statusCode, 200)
  const days = daily.json().data
  t.equal(days.length, 9, 'every day of the range, empty ones too')
  t.match(days[0], { start: from, events: 2, activeUsers: 1, byEvent: { 'Check Viewed': 2 } })
  t.match(days[1], { events: 0, activeUsers: 0, byEvent: {} })
  t.match(days[2], { events: 2, activeUsers: 2, byEvent: { 'Check Viewed': 2 } }, 'the owner (with an anonymous id) and the colleague')
  t.same(daily.json().meta, { from, to, interval: 'day', event: 'Check Viewed' })

  const weekly = await app.inject({
    method: 'GET',
    url: `${base}/usage/events?from=${from}&to=${to}&interval=week`,
    headers: owner.headers,
  })
  const weeks = weekly.json().data as Array<{ start: string; events: number }>
  for (const week of weeks) t.equal(new Date(`${week.start}T00:00:00Z`).getUTCDay(), 1, 'weeks start on Monday')
  t.equal(
    weeks.reduce((sum, week) => sum + week.events, 0),
    5,
    'the five events of the range, however the weeks cut it',
  )

  for (const query of [
    `from=${to}&to=${from}`,
    `from=${from}&to=2030-01-01`,
    `from=${from}&to=${to}&interval=month`,
    `from=nope&to=${to}`,
  ]) {
    const refused = await app.inject({ method: 'GET', url: `${base}/usage/events?${query}`, headers: owner.headers })
    t.equal(refused.statusCode, 400, query)
  }
})

t.test('retention drops whole months and keeps the ones ahead ready', async (t) => {
  const inOneYear = new Date(Date.now() + 365 * 86_400_000)
  const before = await monthlyPartitions(ANALYTICS_EVENTS, db)
  const outcome = await maintainAnalytics(app.database, { analyticsEvents: 30, analyticsSummaries: 60 }, inOneYear)
  t.ok(outcome.created.length >= 2, 'the months up to the new date and two ahead were created')
  t.ok(outcome.dropped.length >= before.length, 'every month older than 30 days before then was dropped')
  const after = await monthlyPartitions(ANALYTICS_EVENTS, db)
  const oldest = after[0]!.month
  t.ok(oldest.getTime() >= Date.UTC(inOneYear.getUTCFullYear(), inOneYear.getUTCMonth() - 2, 1), 'no month older than the retention')
  const { rows } = await sql<{ count: number }>`select count(*)::int8 as count from core.analytics_events`.execute(db)
  t.equal(rows[0]!.count, 0, 'the events of the dropped months went with them')
  t.ok(outcome.summariesRemoved > 0, 'summaries past their retention were deleted')
  const summaries = await db.selectFrom('core.analyticsDaily').select('day').execute()
  t.equal(summaries.length, 0)
  // Back to today's months, so the rest of the suite (and a rerun) writes where it expects.
  await maintainAnalytics(app.database, { analyticsEvents: 180, analyticsSummaries: 730 })
  t.equal((await track({ event: 'After Retention', messageId: 'after' })).statusCode, 200)
})
