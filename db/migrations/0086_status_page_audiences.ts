import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Audiences of a status page (issue 58; decision 0015, "Audiences"): one page, several groups of
  // readers (each enterprise customer, say), each seeing the components and incidents tagged for
  // it beside the untagged ones. An audience is reached through its secret link (only the token's
  // hash is kept) or by signing in with an address of one of its e-mail domains.
  await db.schema
    .withSchema('divinux')
    .createTable('status_audiences')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`char_length(name) between 1 and 100`))
    .addColumn('email_domains', sql`text[]`, (col) =>
      col
        .notNull()
        .defaultTo(sql`'{}'`)
        .check(sql`cardinality(email_domains) <= 20`),
    )
    .addColumn('link_token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('status_audiences_page_name_key', ['page_id', 'name'])
    .execute()
  // What is tagged for audiences (empty: everyone who may read the page), and the audiences a
  // subscriber subscribed as (empty: told only of what everyone is told).
  for (const table of ['status_components', 'status_incidents', 'status_subscribers'])
    await sql`alter table divinux.${sql.raw(table)} add column audience_ids uuid[] not null default '{}'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['status_components', 'status_incidents', 'status_subscribers'])
    await sql`alter table divinux.${sql.raw(table)} drop column if exists audience_ids`.execute(db)
  await db.schema.withSchema('divinux').dropTable('status_audiences').ifExists().execute()
}
