import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Outbound incident webhooks (issue 14), signed per the Standard Webhooks specification. The
  // secret signs every delivery, so it is kept as given; it is answered only when generated.
  await db.schema
    .withSchema('divinux')
    .createTable('outbound_webhooks')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', sql`text[]`, (col) => col.notNull())
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index outbound_webhooks_org_name_idx on divinux.outbound_webhooks (organization_id, lower(name))`.execute(db)

  // Every delivery: its payload as sent (the same bytes on each retry), and how it went.
  await db.schema
    .withSchema('divinux')
    .createTable('outbound_webhook_deliveries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('webhook_id', 'uuid', (col) => col.notNull().references('divinux.outbound_webhooks.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('event', 'text', (col) => col.notNull())
    .addColumn('alert_id', 'uuid', (col) => col.references('divinux.alerts.id').onDelete('set null'))
    .addColumn('attempt_id', 'uuid', (col) => col.references('divinux.notification_attempts.id').onDelete('set null'))
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'delivered', 'failed')`),
    )
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .execute()
  await sql`create index outbound_webhook_deliveries_webhook_idx on divinux.outbound_webhook_deliveries (webhook_id, created_at desc)`.execute(
    db,
  )

  // Alert lifecycle events are dispatched (to outbound webhooks, later workflows) from the
  // timeline itself: a row is written with its change, and a worker claims the undispatched ones.
  await db.schema.withSchema('divinux').alterTable('alert_events').addColumn('dispatched_at', 'timestamptz').execute()
  await sql`update divinux.alert_events set dispatched_at = now()`.execute(db)
  await sql`create index alert_events_undispatched_idx on divinux.alert_events (created_at)
    where dispatched_at is null and type in ('created', 'acknowledged', 'resolved')`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').alterTable('alert_events').dropColumn('dispatched_at').execute()
  await db.schema.withSchema('divinux').dropTable('outbound_webhook_deliveries').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('outbound_webhooks').ifExists().execute()
}
