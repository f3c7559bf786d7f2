import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('divinux')
    .createTable('rcas')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('draft')
        .check(sql`status in ('draft', 'in_review', 'published')`),
    )
    .addColumn('summary', 'text')
    .addColumn('root_cause', 'text')
    .addColumn('impact', 'text')
    .addColumn('timeline', 'text')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    // Which of summary, rootCause, impact, timeline a person wrote: an AI draft leaves them alone.
    .addColumn('edited_fields', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('ai_drafted_at', 'timestamptz')
    .addColumn('published_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index rcas_org_created_idx on divinux.rcas (organization_id, created_at desc, id desc)`.execute(db)

  await db.schema
    .withSchema('divinux')
    .createTable('rca_incident_links')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('rca_id', 'uuid', (col) => col.notNull().references('divinux.rcas.id').onDelete('cascade'))
    // The incident reference (ARCHITECTURE.md): a surface and the incident's id there.
    .addColumn('source_product', 'text', (col) => col.notNull().check(sql`source_product in ('alerting', 'synthetics', 'statuspages')`))
    .addColumn('incident_id', 'uuid', (col) => col.notNull())
    .addColumn('linked_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('rca_incident_links_incident_key', ['rca_id', 'source_product', 'incident_id'])
    .execute()
  await sql`create index rca_incident_links_org_incident_idx on divinux.rca_incident_links (organization_id, source_product, incident_id)`.execute(
    db,
  )

  await db.schema
    .withSchema('divinux')
    .createTable('rca_action_items')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('rca_id', 'uuid', (col) => col.notNull().references('divinux.rcas.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    // A user who is a member of the organization when assigned (checked by the API).
    .addColumn('assignee_user_id', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('open')
        .check(sql`status in ('open', 'in_progress', 'done', 'wont_do')`),
    )
    .addColumn('priority', 'text', (col) =>
      col
        .notNull()
        .defaultTo('medium')
        .check(sql`priority in ('low', 'medium', 'high', 'urgent')`),
    )
    .addColumn('due_date', 'date')
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index rca_action_items_rca_idx on divinux.rca_action_items (organization_id, rca_id, created_at)`.execute(db)
  await sql`create index rca_action_items_assignee_idx on divinux.rca_action_items (organization_id, assignee_user_id) where status in ('open', 'in_progress')`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['rca_action_items', 'rca_incident_links', 'rcas']) {
    await db.schema.withSchema('divinux').dropTable(table).ifExists().execute()
  }
}
