import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Incident templates of a status page (issue 58; decision 0015, "Incident templates"): a named
  // starting point for an incident (its status, impact and the statuses it gives components) with
  // its title and body in each of the page's languages, used by the API, the comms agent's drafts
  // and Slack's `/incident statuspage`. Components are kept by id: one removed is skipped on use.
  await db.schema
    .withSchema('divinux')
    .createTable('status_incident_templates')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('key', 'text', (col) => col.notNull().check(sql`key ~ '^[a-z0-9][a-z0-9-]{0,62}$'`))
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('investigating')
        .check(sql`status in ('investigating', 'identified', 'monitoring', 'resolved')`),
    )
    .addColumn('impact', 'text', (col) =>
      col
        .notNull()
        .defaultTo('minor')
        .check(sql`impact in ('none', 'minor', 'major', 'critical')`),
    )
    .addColumn('component_statuses', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('texts', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('status_incident_templates_page_key_key', ['page_id', 'key'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('status_incident_templates').ifExists().execute()
}
