import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Organization reports (issue 17): asked for over HTTP, written by a job, downloaded through a
  // signed link. The file lives in its own table, in the database every replica reads, so listing
  // reports never reads their bytes.
  await db.schema
    .withSchema('core')
    .createTable('reports')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('format', 'text', (col) => col.notNull())
    .addColumn('period_from', 'timestamptz', (col) => col.notNull())
    .addColumn('period_to', 'timestamptz', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('queued'))
    .addColumn('error', 'text')
    .addColumn('requested_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('file_name', 'text')
    .addColumn('content_type', 'text')
    .addColumn('size_bytes', 'integer')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('reports_type_check', sql`type in ('audit-log', 'incidents', 'uptime', 'ai-usage')`)
    .addCheckConstraint('reports_format_check', sql`format in ('csv', 'pdf')`)
    .addCheckConstraint('reports_status_check', sql`status in ('queued', 'running', 'ready', 'failed')`)
    .addCheckConstraint('reports_period_check', sql`period_from < period_to`)
    .execute()
  await sql`create index reports_org_created_idx on core.reports (organization_id, created_at desc, id desc)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('report_files')
    .addColumn('report_id', 'uuid', (col) => col.primaryKey().references('core.reports.id').onDelete('cascade'))
    .addColumn('content', 'bytea', (col) => col.notNull())
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').dropTable('report_files').ifExists().execute()
  await db.schema.withSchema('core').dropTable('reports').ifExists().execute()
}
