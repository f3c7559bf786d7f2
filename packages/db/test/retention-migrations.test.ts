import t from 'tap'
import { Migrator, sql } from 'kysely'
import { openDatabase } from '@svc/db'
import { migrations } from '@svc/migrations'
import { createTestDatabase } from '@svc/testkit'

// 0051 to 0054 (decision 0022) on a database with rows in it: the analytics and activity tables
// arrive with this month's partitions, the report type `usage` is allowed, the retention indexes
// are built over existing rows, and no row is lost or changed.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl })
t.teardown(() => database.close())
const raw = database.db.withoutPlugins()
const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => migrations } })
const before = await migrator.migrateTo('0050_runbooks_and_agents')
if (before.error) throw before.error

const one = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(raw)).rows[0] as T
const { id: orgId } = await one<{ id: string }>(sql`insert into core.organizations (name, slug) values ('Rows', 'rows') returning id`)
const { id: userId } = await one<{ id: string }>(sql`insert into core.users (email) values ('kept@rows.example') returning id`)
const { id: alertId } = await one<{ id: string }>(sql`
  insert into divinux.alerts (organization_id, fingerprint, priority, source, title, status, resolved_at)
  values (${orgId}, 'fp', 'P2', 'generic', 'Disk', 'resolved', now() - interval '2 days') returning id`)
await sql`insert into divinux.alert_events (organization_id, alert_id, type) values (${orgId}, ${alertId}, 'created'), (${orgId}, ${alertId}, 'resolved')`.execute(
  raw,
)
await sql`
  insert into divinux.notification_attempts (organization_id, alert_id, round, step, user_id, target_type, target_id, channel, status)
  values (${orgId}, ${alertId}, 1, 1, ${userId}, 'user', ${userId}, 'email', 'sent')`.execute(raw)
await sql`insert into core.outbox (organization_id, channel, kind, recipient, body_text, status) values (${orgId}, 'email', 'page', 'kept@rows.example', 'Disk', 'sent')`.execute(
  raw,
)
await sql`
  insert into core.reports (organization_id, type, format, period_from, period_to, requested_by)
  values (${orgId}, 'ai-usage', 'csv', now() - interval '7 days', now(), ${userId})`.execute(raw)

const { id: analysisId } = await one<{ id: string }>(sql`
  insert into divinux.analyses (organization_id, incident_id, source_product, trigger, status)
  values (${orgId}, ${alertId}, 'alerting', 'automatic', 'completed') returning id`)
// Written a second apart: rows written within the clock's resolution have no order to recover.
for (const [index, type] of ['requested', 'processing', 'completed'].entries())
  await sql`
    insert into divinux.analysis_events (organization_id, analysis_id, type, created_at)
    values (${orgId}, ${analysisId}, ${type}, now() - make_interval(secs => ${3 - index}))`.execute(raw)

const counts = () =>
  one<Record<string, number>>(sql`
    select (select count(*) from divinux.alert_events)::int as events, (select count(*) from divinux.notification_attempts)::int as attempts,
           (select count(*) from core.outbox)::int as outbox, (select count(*) from core.reports)::int as reports,
           (select count(*) from core.users)::int as users`)
const rowsBefore = await counts()
const after = await migrator.migrateTo('0054_analysis_event_order')
if (after.error) throw after.error

t.test('no row is lost', async (t) => {
  t.same(await counts(), rowsBefore)
  t.same(await one(sql`select email, last_active_at from core.users where id = ${userId}`), {
    email: 'kept@rows.example',
    last_active_at: null,
  })
})

t.test('the new tables take rows into this month’s partition', async (t) => {
  await sql`
    insert into core.analytics_events (organization_id, message_id, event, source, occurred_at) values (${orgId}, 'm-1', 'Check Created', 'server', now())`.execute(
    raw,
  )
  await sql`
    insert into core.user_activities (user_id, day, activity_key, kind, product, first_at, last_at)
    values (${userId}, current_date, 'api:platform', 'api_use', 'platform', now(), now())`.execute(raw)
  const { partition } = await one<{ partition: string }>(sql`select tableoid::regclass::text as partition from core.analytics_events`)
  const month = new Date().toISOString().slice(0, 7).replace('-', '_')
  t.equal(partition, `core.analytics_events_p${month}`)
})

t.test('a usage report may be recorded', async (t) => {
  await sql`
    insert into core.reports (organization_id, type, format, period_from, period_to, requested_by)
    values (${orgId}, 'usage', 'csv', now() - interval '7 days', now(), ${userId})`.execute(raw)
  t.equal((await counts()).reports, 2)
})

t.test('the retention indexes exist', async (t) => {
  const expected = [
    'alert_events_created_idx',
    'analysis_events_created_idx',
    'notification_attempts_created_idx',
    'outbound_webhook_deliveries_created_idx',
    'webhook_deliveries_created_idx',
  ]
  const { rows } = await sql<{
    indexname: string
  }>`select indexname from pg_indexes where indexname = any(${expected}::text[]) order by indexname`.execute(raw)
  t.same(
    rows.map((row) => row.indexname),
    expected,
  )
})

t.test('existing analysis events are numbered in the order they were written, new ones after them', async (t) => {
  await sql`insert into divinux.analysis_events (organization_id, analysis_id, type) values (${orgId}, ${analysisId}, 'step')`.execute(raw)
  const { rows } = await sql<{ type: string; seq: number }>`select type, seq from divinux.analysis_events order by seq`.execute(raw)
  t.same(
    rows.map((row) => row.type),
    ['requested', 'processing', 'completed', 'step'],
  )
  t.same(
    rows.map((row) => Number(row.seq)),
    [1, 2, 3, 4],
  )
})
