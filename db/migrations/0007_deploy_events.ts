import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('divinux')
    .createTable('deploy_events')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('config_id', 'uuid', (col) => col.references('divinux.webhook_configs.id').onDelete('set null'))
    .addColumn('source', 'text', (col) => col.notNull().check(sql`source in ('generic', 'github')`))
    .addColumn('service', 'text', (col) => col.notNull())
    .addColumn('environment', 'text')
    .addColumn('version', 'text')
    .addColumn('commit_sha', 'text')
    .addColumn('repository', 'text')
    .addColumn('url', 'text')
    .addColumn('status', 'text', (col) =>
      col.notNull().check(sql`status in ('queued', 'pending', 'in_progress', 'success', 'failure', 'error', 'inactive')`),
    )
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    // When the deploy happened, for ordering and for "deploys before this alert": finished, else started, else received.
    .addColumn('deployed_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index deploy_events_org_time_idx on divinux.deploy_events (organization_id, deployed_at desc, id desc)`.execute(db)
  await sql`create index deploy_events_org_service_time_idx on divinux.deploy_events (organization_id, service, deployed_at desc)`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('deploy_events').ifExists().execute()
}
