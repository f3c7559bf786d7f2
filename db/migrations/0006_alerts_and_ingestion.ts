import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('divinux')
    .createTable('alerts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('config_id', 'uuid', (col) => col.references('divinux.webhook_configs.id').onDelete('set null'))
    // Where it came from: the webhook format (alertmanager, pagerduty, ...).
    .addColumn('source', 'text', (col) => col.notNull())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('priority', 'text', (col) => col.notNull().check(sql`priority in ('P1', 'P2', 'P3', 'P4', 'P5')`))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('open')
        .check(sql`status in ('open', 'acknowledged', 'resolved')`),
    )
    .addColumn('service', 'text')
    // Identifies "the same problem" across deliveries: a repeated firing event updates the open alert.
    .addColumn('fingerprint', 'text', (col) => col.notNull())
    .addColumn('group_key', 'text')
    // The first alert of its group (alerts with one group key within the config's window); null for that first one.
    .addColumn('group_id', 'uuid', (col) => col.references('divinux.alerts.id').onDelete('set null'))
    .addColumn('occurrences', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('labels', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('first_seen_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('acknowledged_at', 'timestamptz')
    .addColumn('acknowledged_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('resolved_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  // At most one unresolved alert per fingerprint: concurrent deliveries of one problem deduplicate here.
  await sql`create unique index alerts_open_fingerprint_key on divinux.alerts (organization_id, fingerprint) where status <> 'resolved'`.execute(
    db,
  )
  await sql`create index alerts_org_created_idx on divinux.alerts (organization_id, created_at desc, id desc)`.execute(db)
  await sql`create index alerts_org_group_idx on divinux.alerts (organization_id, group_key, created_at desc) where group_key is not null`.execute(
    db,
  )

  await db.schema
    .withSchema('divinux')
    .createTable('alert_events')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('alert_id', 'uuid', (col) => col.notNull().references('divinux.alerts.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull().check(sql`type in ('created', 'occurred', 'acknowledged', 'resolved')`))
    .addColumn('actor_user_id', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('data', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    // clock_timestamp: events of one transaction keep their order.
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`clock_timestamp()`))
    .execute()
  await sql`create index alert_events_alert_idx on divinux.alert_events (organization_id, alert_id, created_at)`.execute(db)

  // One row per processed delivery: a retried delivery is answered from here, not processed again.
  await db.schema
    .withSchema('divinux')
    .createTable('webhook_deliveries')
    .addColumn('config_id', 'uuid', (col) => col.notNull().references('divinux.webhook_configs.id').onDelete('cascade'))
    .addColumn('delivery_key', 'text', (col) => col.notNull())
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('result', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_deliveries_pkey', ['config_id', 'delivery_key'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('webhook_deliveries').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('alert_events').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('alerts').ifExists().execute()
}
