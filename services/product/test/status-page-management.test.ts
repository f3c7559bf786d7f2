import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

const receiver = await startWebhookReceiver(t, () => ({ status: 204 }))
const service = await startTestService(t, buildApp, {
  config: { outbound: { allowPrivateTargets: true }, rateLimit: { max: 300, timeWindow: '1 minute' } },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'manage', {
  manager: { statuspages: 'manager' },
  responder: { statuspages: 'responder' },
  viewer: { statuspages: 'viewer' },
})
const [manager, responder, viewer, stranger] = ['manager', 'responder', 'viewer', 'stranger'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const page = (await call(manager!, 'POST', `${base}/pages`, { name: 'Ops', slug: 'ops', published: true })).json()
const pageBase = `${base}/pages/${page.id}`
const db1 = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'Database' })).json()
const queue = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'Queue', position: 0 })).json()
const statusOf = async (id: string) =>
  (await db.selectFrom('divinux.statusComponents').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status

t.test('component groups and components are renamed, moved and removed; another page’s ids are not found', async (t) => {
  const group = (await call(manager!, 'POST', `${pageBase}/component-groups`, { name: 'Storage', description: 'Where data lives' })).json()
  const renamed = await call(manager!, 'PATCH', `${pageBase}/component-groups/${group.id}`, { name: ' Data ', position: 3 })
  t.match(renamed.json(), { name: 'Data', position: 3 })
  const moved = await call(manager!, 'PATCH', `${pageBase}/components/${db1.id}`, {
    groupId: group.id,
    description: 'Primary',
    showUptime: false,
  })
  t.match(moved.json(), { groupId: group.id, description: 'Primary', showUptime: false })
  t.same(
    (await call(viewer!, 'GET', `${pageBase}/components?limit=1&page=2`)).json(),
    { data: [(await call(viewer!, 'GET', `${pageBase}/components/${queue.id}`)).json()], meta: { page: 2, limit: 1, total: 2 } },
    'components are listed by position, then by when they were added',
  )
  t.equal((await call(viewer!, 'GET', `${pageBase}/component-groups`)).json().meta.total, 1)
  t.equal((await call(manager!, 'DELETE', `${pageBase}/component-groups/${group.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${pageBase}/components/${db1.id}`)).json().groupId, null, 'its components stay, ungrouped')
  t.equal((await call(manager!, 'PATCH', `${pageBase}/component-groups/${group.id}`, { name: 'X' })).statusCode, 404)
  t.equal((await call(viewer!, 'GET', `${pageBase}/components/not-a-uuid`)).statusCode, 404)

  const other = (await call(manager!, 'POST', `${base}/pages`, { name: 'Other', slug: 'other-ops' })).json()
  t.equal((await call(viewer!, 'GET', `${base}/pages/${other.id}/components/${db1.id}`)).statusCode, 404, 'a component of another page')
  const crossed = await call(manager!, 'POST', `${base}/pages/${other.id}/incidents`, {
    name: 'X',
    body: 'y',
    components: [{ componentId: db1.id, status: 'major_outage' }],
  })
  t.equal(crossed.statusCode, 400)
  t.match(crossed.json().message, /components\/0\/componentId/)
  const extra = (await call(manager!, 'POST', `${base}/pages/${other.id}/components`, { name: 'Extra' })).json()
  t.equal((await call(manager!, 'DELETE', `${base}/pages/${other.id}/components/${extra.id}`)).statusCode, 204)
  t.equal((await call(stranger!, 'DELETE', `/api/v1/statuspages/organizations/${otherOrgId}/pages/${other.id}`)).statusCode, 404)
  t.equal((await call(manager!, 'DELETE', `${base}/pages/${other.id}`)).statusCode, 204)
})

t.test('incidents are listed by status, renamed, and their updates listed newest first', async (t) => {
  const incident = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'Queue backlog',
      body: 'Messages are delayed.',
      components: [{ componentId: queue.id, status: 'degraded_performance' }],
    })
  ).json()
  await call(responder!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, {
    body: 'Consumers scaled up.',
    status: 'monitoring',
    displayAt: new Date(Date.now() + 1000).toISOString(),
  })
  const patched = await call(manager!, 'PATCH', `${pageBase}/incidents/${incident.id}`, {
    name: 'Queue backlog in eu-west',
    impact: 'minor',
  })
  t.match(patched.json(), { name: 'Queue backlog in eu-west', impact: 'minor', status: 'monitoring' })
  t.ok(patched.json().monitoringAt)
  const updates = (await call(viewer!, 'GET', `${pageBase}/incidents/${incident.id}/updates`)).json().data
  t.same(
    updates.map((update: { status: string }) => update.status),
    ['monitoring', 'investigating'],
  )
  t.equal((await call(viewer!, 'GET', `${pageBase}/incidents?status=monitoring`)).json().meta.total, 1)
  t.equal((await call(viewer!, 'GET', `${pageBase}/incidents?status=resolved`)).json().meta.total, 0)
  t.equal((await call(viewer!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'x' })).statusCode, 403)
  const resolved = await call(manager!, 'POST', `${pageBase}/incidents`, { name: 'Already over', body: 'It happened.', status: 'resolved' })
  t.ok(resolved.json().resolvedAt, 'an incident reported after the fact is resolved at once')
  await call(responder!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'Done.', status: 'resolved' })
  t.equal(await statusOf(queue.id), 'operational')
})

t.test('maintenance: moved, its components changed, cancelled; every step validated', async (t) => {
  const later = Date.now() + 86_400_000
  const maintenance = (
    await call(manager!, 'POST', `${pageBase}/maintenances`, {
      name: 'Storage migration',
      body: 'Moving to new disks.',
      scheduledFor: new Date(later).toISOString(),
      scheduledUntil: new Date(later + 3_600_000).toISOString(),
      componentIds: [db1.id],
      autoComplete: false,
    })
  ).json()
  t.match(maintenance, {
    status: 'scheduled',
    autoStart: true,
    autoComplete: false,
    components: [{ componentId: db1.id, status: 'under_maintenance' }],
  })
  const unknown = await call(manager!, 'PATCH', `${pageBase}/maintenances/${maintenance.id}`, {
    componentIds: ['00000000-0000-4000-8000-000000000000'],
  })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /componentIds\/0\/componentId/)
  const backwards = await call(manager!, 'PATCH', `${pageBase}/maintenances/${maintenance.id}`, {
    scheduledUntil: new Date(later - 1000).toISOString(),
  })
  t.equal(backwards.statusCode, 400)
  t.match(backwards.json().message, /scheduledUntil/)

  const moved = await call(manager!, 'PATCH', `${pageBase}/maintenances/${maintenance.id}`, {
    scheduledFor: new Date(later + 7_200_000).toISOString(),
    scheduledUntil: new Date(later + 10_800_000).toISOString(),
    componentIds: [queue.id],
    name: 'Storage migration (moved)',
  })
  t.equal(moved.statusCode, 200)
  t.match(moved.json(), { name: 'Storage migration (moved)', components: [{ componentId: queue.id }] })
  const starts = await sql<{
    data: { at: string }
  }>`select data from pgboss.job where name = 'statuspages.maintenance' and data->>'maintenanceId' = ${maintenance.id} and data->>'to' = 'in_progress'`.execute(
    db,
  )
  t.equal(starts.rows.length, 2, 'a start is queued for the new window too')
  // The job of the old window finds the window moved, and does nothing.
  await sql`update pgboss.job set start_after = now() where name = 'statuspages.maintenance' and data->>'maintenanceId' = ${maintenance.id} and data->>'at' = ${new Date(later).toISOString()}`.execute(
    db,
  )
  await until('the stale job to run', async () => {
    const rows = await sql<{
      state: string
    }>`select state from pgboss.job where name = 'statuspages.maintenance' and data->>'at' = ${new Date(later).toISOString()}`.execute(db)
    return rows.rows.every((row) => row.state === 'completed')
  })
  t.equal((await call(viewer!, 'GET', `${pageBase}/maintenances/${maintenance.id}`)).json().status, 'scheduled')

  t.equal(
    (
      await call(responder!, 'POST', `${pageBase}/maintenances/${maintenance.id}/updates`, {
        body: 'Starting early.',
        status: 'in_progress',
      })
    ).statusCode,
    201,
  )
  t.equal(await statusOf(queue.id), 'under_maintenance')
  const cancelled = await call(responder!, 'POST', `${pageBase}/maintenances/${maintenance.id}/updates`, {
    body: 'Called off.',
    status: 'cancelled',
  })
  t.equal(cancelled.statusCode, 201, cancelled.body)
  t.equal(await statusOf(queue.id), 'operational')
  t.equal((await call(manager!, 'PATCH', `${pageBase}/maintenances/${maintenance.id}`, { name: 'Again' })).statusCode, 400)
  t.equal((await call(viewer!, 'GET', `${pageBase}/maintenances?status=cancelled`)).json().meta.total, 1)

  const draft = (
    await call(manager!, 'POST', `${pageBase}/maintenances`, {
      name: 'Unannounced',
      scheduledFor: new Date(later).toISOString(),
      scheduledUntil: new Date(later + 60_000).toISOString(),
      published: false,
      componentIds: [db1.id],
    })
  ).json()
  t.equal(draft.published, false)
  await call(responder!, 'POST', `${pageBase}/maintenances/${draft.id}/updates`, { body: 'Quietly started.', status: 'in_progress' })
  t.equal(await statusOf(db1.id), 'operational', 'a draft maintenance holds nothing public')
  t.equal((await call(manager!, 'PATCH', `${pageBase}/maintenances/${draft.id}`, { published: true })).json().published, true)
  t.equal(await statusOf(db1.id), 'under_maintenance', 'published, it does')
  t.equal((await call(manager!, 'DELETE', `${pageBase}/maintenances/${draft.id}`)).statusCode, 204)
  t.equal(await statusOf(db1.id), 'operational', 'deleted, its components return')
  t.equal((await call(viewer!, 'GET', `${pageBase}/maintenances/${draft.id}`)).statusCode, 404)
})

t.test('managers add and remove subscribers; e-mail ones still confirm themselves', async (t) => {
  const email = await call(manager!, 'POST', `${pageBase}/subscribers`, { email: 'ops@example.com', componentIds: [db1.id] })
  t.equal(email.statusCode, 201)
  t.match(email.json(), { kind: 'email', confirmed: false, componentIds: [db1.id] })
  t.notOk(email.json().secret)
  const hook = await call(manager!, 'POST', `${pageBase}/subscribers`, { url: `${receiver.url}/ops` })
  t.match(hook.json(), { kind: 'webhook', confirmed: true, secret: /^whsec_/ })
  const twice = await call(manager!, 'POST', `${pageBase}/subscribers`, { url: `${receiver.url}/ops` })
  t.equal(twice.statusCode, 409)
  t.match(twice.json().message, /url/)
  const refused = await call(manager!, 'POST', `${pageBase}/subscribers`, { url: 'ftp://example.com/hook' })
  t.equal(refused.statusCode, 400)
  t.equal((await call(viewer!, 'POST', `${pageBase}/subscribers`, { email: 'x@example.com' })).statusCode, 403)
  t.equal((await call(viewer!, 'GET', `${pageBase}/subscribers`)).json().meta.total, 2)
  t.equal((await call(manager!, 'DELETE', `${pageBase}/subscribers/${hook.json().id}`)).statusCode, 204)
  t.equal((await call(manager!, 'DELETE', `${pageBase}/subscribers/${hook.json().id}`)).statusCode, 404)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('action')
    .where('entityType', '=', 'status_subscriber')
    .orderBy('createdAt')
    .execute()
  t.same(
    audit.map((row) => row.action),
    ['status_subscriber.created', 'status_subscriber.created', 'status_subscriber.deleted'],
  )
})

t.test('public documents: a gzipped copy with its own ETag, links never from the Host header, a per-address limit', async (t) => {
  const url = '/api/v1/statuspages/public/ops/api/v2/summary.json'
  const plain = await app.inject({ url, headers: { host: 'evil.example' } })
  t.notMatch(plain.body, /evil\.example/, 'a forged Host never reaches a document')
  const gzipped = await app.inject({ url, headers: { 'accept-encoding': 'gzip' } })
  t.equal(gzipped.headers['content-encoding'], 'gzip')
  t.equal(gzipped.headers.vary, 'Accept-Encoding')
  t.not(gzipped.headers.etag, plain.headers.etag)
  t.equal((await app.inject({ url, headers: { 'accept-encoding': 'gzip', 'if-none-match': `W/${gzipped.headers.etag}` } })).statusCode, 304)
  t.equal(
    (await app.inject({ url, headers: { 'if-none-match': String(gzipped.headers.etag) } })).statusCode,
    200,
    'the other representation’s ETag',
  )
  const feed = await app.inject({ url: '/api/v1/statuspages/public/ops/history.rss' })
  t.match(feed.body, /Queue backlog in eu-west/)
  let limited = 0
  for (let index = 0; index < 305 && limited === 0; index++) {
    if ((await app.inject({ url: '/api/v1/statuspages/public/ops/api/v2/status.json', remoteAddress: '203.0.113.9' })).statusCode === 429)
      limited += 1
  }
  t.equal(limited, 1, 'one address is limited')
  t.equal(
    (await app.inject({ url: '/api/v1/statuspages/public/ops/api/v2/status.json', remoteAddress: '203.0.113.10' })).statusCode,
    200,
    'others are not',
  )
})

t.test('an update reaches a page’s many subscribers in batches, each once', async (t) => {
  const crowd = (await call(manager!, 'POST', `${base}/pages`, { name: 'Crowd', slug: 'crowd', published: true })).json()
  await sql`insert into divinux.status_subscribers (page_id, organization_id, kind, email, unsubscribe_token, confirmed_at, created_at)
    select ${crowd.id}::uuid, ${orgId}::uuid, 'email', 'fan' || n || '@crowd.example', 'token-crowd-' || n, now(), now() - interval '1 minute'
    from generate_series(1, 1100) as n`.execute(db)
  const incident = (
    await call(manager!, 'POST', `${base}/pages/${crowd.id}/incidents`, { name: 'Everything is slow', body: 'Looking.' })
  ).json()
  const updateId = incident.updates[0].id as string
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('divinux.statusNotifications')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('updateId', '=', updateId)
          .executeTakeFirstOrThrow()
      ).n,
    )
  await until('every subscriber to be notified', async () => (await count()) === 1100, 30_000)
  const outbox = await db
    .selectFrom('core.outbox')
    .select((eb) => eb.fn.count<number>('recipient').distinct().as('n'))
    .where('kind', '=', 'statuspage.incident.created')
    .where('recipient', 'like', '%@crowd.example')
    .executeTakeFirstOrThrow()
  t.equal(Number(outbox.n), 1100, 'one message per subscriber')
  const rows = await db.selectFrom('core.outbox').select('id').where('recipient', 'like', '%@crowd.example').execute()
  t.equal(rows.length, 1100, 'and no more')
})

t.test('a confirmation token works only through its own page', async (t) => {
  await call(manager!, 'POST', `${base}/pages`, { name: 'Second', slug: 'second-ops', published: true })
  const row = await db
    .selectFrom('divinux.statusSubscribers')
    .select(['id'])
    .where('email', '=', 'ops@example.com')
    .executeTakeFirstOrThrow()
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ confirmTokenHash: createHash('sha256').update('known-token-123').digest('hex') })
    .where('id', '=', row.id)
    .execute()
  const elsewhere = await app.inject({ url: '/api/v1/statuspages/public/second-ops/subscribers/confirm?token=known-token-123' })
  t.equal(elsewhere.statusCode, 404)
  t.equal(
    (await db.selectFrom('divinux.statusSubscribers').select('confirmedAt').where('id', '=', row.id).executeTakeFirstOrThrow()).confirmedAt,
    null,
    'nothing confirmed',
  )
  const own = await app.inject({ url: '/api/v1/statuspages/public/ops/subscribers/confirm?token=known-token-123' })
  t.equal(own.statusCode, 200)
  t.ok(
    (await db.selectFrom('divinux.statusSubscribers').select('confirmedAt').where('id', '=', row.id).executeTakeFirstOrThrow()).confirmedAt,
  )
})
