import { randomUUID } from 'node:crypto'
import t from 'tap'
import { pruneOutbox } from '@svc/notifier'
import { pruneAlertingHistory } from '@svc/plugin-alerting'
import { pruneAnalysisEvents } from '@svc/plugin-insights'
import { sql } from 'kysely'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'

// Retention of the product surfaces' growing history (decision 0022): old rows of each kind go in
// batches, recent ones and the ones other rules keep stay. The rows are written as the surfaces
// write them, then dated back.
const service = await startTestService(t, buildApp)
const db = service.app.database.db
const DAY = 86_400_000
const ago = (days: number) => new Date(Date.now() - days * DAY)

const { id: organizationId } = await db
  .insertInto('core.organizations')
  .values({ name: 'Kept', slug: 'kept' })
  .returning('id')
  .executeTakeFirstOrThrow()
const hook = await db
  .insertInto('divinux.outboundWebhooks')
  .values({ organizationId, name: 'Out', url: 'https://example.com/hook', secret: 's', events: ['alert.created'] })
  .returning('id')
  .executeTakeFirstOrThrow()
const delivery = (status: string, createdAt: Date) =>
  db
    .insertInto('divinux.outboundWebhookDeliveries')
    .values({ webhookId: hook.id, organizationId, event: 'alert.created', payload: '{}', status, createdAt })
    .execute()
const alert = (status: string) =>
  db
    .insertInto('divinux.alerts')
    .values({ organizationId, fingerprint: randomUUID(), priority: 'P3', source: 'generic', title: 'Disk', status })
    .returning('id')
    .executeTakeFirstOrThrow()
const oldResolved = await db
  .insertInto('divinux.alerts')
  .values({
    organizationId,
    fingerprint: randomUUID(),
    priority: 'P3',
    source: 'generic',
    title: 'Old',
    status: 'resolved',
    resolvedAt: ago(450),
    createdAt: ago(460),
  })
  .returning('id')
  .executeTakeFirstOrThrow()
const recentlyResolved = await db
  .insertInto('divinux.alerts')
  .values({
    organizationId,
    fingerprint: randomUUID(),
    priority: 'P3',
    source: 'generic',
    title: 'Recent',
    status: 'resolved',
    resolvedAt: ago(3),
    createdAt: ago(460),
  })
  .returning('id')
  .executeTakeFirstOrThrow()
const open = await alert('open')
// Old history, dispatched long ago: an undispatched `created` event would be picked up by the
// service's own correlation and outbound-webhook workers while the test runs.
const event = (alertId: string, type: string, createdAt: Date) =>
  db.insertInto('divinux.alertEvents').values({ organizationId, alertId, type, createdAt, dispatchedAt: createdAt }).execute()
const attempt = (alertId: string, createdAt: Date, step: number) =>
  db
    .insertInto('divinux.notificationAttempts')
    .values({
      organizationId,
      alertId,
      round: 1,
      step,
      targetType: 'user',
      targetId: randomUUID(),
      channel: 'email',
      status: 'sent',
      createdAt,
    })
    .execute()
const RETENTION = { alertEvents: 400, notificationAttempts: 400, webhookDeliveries: 30 }

t.test('alerting: timelines of long-resolved alerts, their old attempts and finished deliveries go; the rest stays', async (t) => {
  for (const alertId of [oldResolved.id, recentlyResolved.id, open.id]) {
    await event(alertId, 'created', ago(460))
    await event(alertId, 'occurred', ago(455))
  }
  await event(oldResolved.id, 'resolved', ago(450))
  await attempt(oldResolved.id, ago(455), 1)
  await attempt(open.id, ago(455), 1)
  await attempt(oldResolved.id, ago(10), 2)
  const config = await db
    .insertInto('divinux.webhookConfigs')
    .values({ organizationId, name: 'In', format: 'generic', apiKeyHash: randomUUID(), apiKeyPrefix: 'abc' })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const [key, days] of [
    ['old', 40],
    ['new', 1],
  ] as const)
    await db
      .insertInto('divinux.webhookDeliveries')
      .values({ configId: config.id, deliveryKey: key, organizationId, result: '{}', createdAt: ago(days) })
      .execute()
  for (const [status, days] of [
    ['delivered', 40],
    ['failed', 40],
    ['pending', 40],
    ['delivered', 1],
  ] as const)
    await delivery(status, ago(days))

  const outcome = await pruneAlertingHistory(db, RETENTION, new Date())
  t.same(outcome, { alertEventsRemoved: 3, notificationAttemptsRemoved: 1, ingestionDeliveriesRemoved: 1, outboundDeliveriesRemoved: 2 })
  const events = await db.selectFrom('divinux.alertEvents').select('alertId').execute()
  t.same(
    [...new Set(events.map((row) => row.alertId))].sort(),
    [recentlyResolved.id, open.id].sort(),
    'an open or recently resolved alert keeps its whole timeline',
  )
  t.ok(await db.selectFrom('divinux.alerts').select('id').where('id', '=', oldResolved.id).executeTakeFirst(), 'the alert itself stays')
  const attempts = await db.selectFrom('divinux.notificationAttempts').select(['alertId', 'step']).orderBy('step').execute()
  t.same(
    attempts.map((row) => `${row.alertId === open.id ? 'open' : 'resolved'}:${row.step}`).sort(),
    ['open:1', 'resolved:2'],
    "an open alert's old attempt stays",
  )
  const left = await db.selectFrom('divinux.outboundWebhookDeliveries').select('status').execute()
  t.same(left.map((row) => row.status).sort(), ['delivered', 'pending'], 'a pending delivery is never dropped')

  const again = await pruneAlertingHistory(db, RETENTION, new Date())
  t.same(Object.values(again), [0, 0, 0, 0], 'nothing is left to delete')
})

t.test('many rows go in several short batches', async (t) => {
  const rows = Array.from({ length: 12_000 }, () => ({
    webhookId: hook.id,
    organizationId,
    event: 'alert.created',
    payload: '{}',
    status: 'delivered',
    createdAt: ago(45),
  }))
  for (let index = 0; index < rows.length; index += 2_000)
    await db
      .insertInto('divinux.outboundWebhookDeliveries')
      .values(rows.slice(index, index + 2_000))
      .execute()
  const outcome = await pruneAlertingHistory(db, RETENTION)
  t.equal(outcome.outboundDeliveriesRemoved, 12_000)
})

t.test('insights: old events of finished analyses go; the analyses stay', async (t) => {
  const analysis = (status: string) =>
    db
      .insertInto('divinux.analyses')
      .values({ organizationId, incidentId: randomUUID(), sourceProduct: 'alerting', trigger: 'manual', status })
      .returning('id')
      .executeTakeFirstOrThrow()
  const finished = await analysis('completed')
  const running = await analysis('processing')
  for (const [analysisId, days] of [
    [finished.id, 200],
    [finished.id, 190],
    [finished.id, 3],
    [running.id, 200],
  ] as const)
    await db
      .insertInto('divinux.analysisEvents')
      .values({ organizationId, analysisId, type: 'requested', createdAt: ago(days) })
      .execute()
  t.same(await pruneAnalysisEvents(db, 180), { analysisEventsRemoved: 2 })
  t.equal((await db.selectFrom('divinux.analyses').select('id').execute()).length, 2)
  t.equal((await db.selectFrom('divinux.analysisEvents').select('id').execute()).length, 2)
})

t.test('outbox: old sent and failed messages go; held and pending stay', async (t) => {
  for (const [status, days] of [
    ['sent', 40],
    ['failed', 40],
    ['held', 40],
    ['pending', 40],
    ['sent', 2],
  ] as const)
    await db
      .insertInto('core.outbox')
      .values({ organizationId, channel: 'email', kind: 'test', recipient: 'a@example.com', bodyText: 'x', status, createdAt: ago(days) })
      .execute()
  t.same(await pruneOutbox(db, 30), { outboxRemoved: 2 })
  const left = await db.selectFrom('core.outbox').select('status').where('kind', '=', 'test').execute()
  t.same(left.map((row) => row.status).sort(), ['held', 'pending', 'sent'])
})

t.test('the product API runs the pruning as a daily job', async (t) => {
  await service.app.jobs.send('product.retention', {})
  await until('the retention job ran', async () => {
    const { rows } = await sql<{
      state: string
    }>`select state from pgboss.job where name = 'product.retention' order by created_on desc limit 1`.execute(db)
    return rows[0]?.state === 'completed'
  })
  t.pass('completed')
})
