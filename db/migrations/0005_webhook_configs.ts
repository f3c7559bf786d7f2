import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('divinux')
    .createTable('webhook_configs')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    // How an ingested body is read: generic JSON, or a monitoring tool's own shape.
    .addColumn('format', 'text', (col) =>
      col.notNull().check(sql`format in ('generic', 'alertmanager', 'grafana', 'pagerduty', 'datadog', 'synthetics', 'alerting')`),
    )
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('default_priority', 'text', (col) =>
      col
        .notNull()
        .defaultTo('P3')
        .check(sql`default_priority in ('P1', 'P2', 'P3', 'P4', 'P5')`),
    )
    .addColumn('auto_analysis', 'boolean', (col) => col.notNull().defaultTo(false))
    // Alerts sharing a group key within this many seconds join one group.
    .addColumn('group_window_seconds', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(300)
        .check(sql`group_window_seconds between 0 and 86400`),
    )
    // The first characters of the API key, shown so a person can tell keys apart.
    .addColumn('api_key_prefix', 'text', (col) => col.notNull())
    // SHA-256 of the API key, hex; the key itself is never stored.
    .addColumn('api_key_hash', 'text', (col) => col.notNull().unique())
    // The HMAC key signatures are checked with. Kept as is, since verifying needs it; never answered after it is set.
    .addColumn('signing_secret', 'text')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('key_rotated_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index webhook_configs_org_idx on divinux.webhook_configs (organization_id, created_at, id)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('webhook_configs').ifExists().execute()
}
