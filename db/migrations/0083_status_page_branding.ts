import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Branding (issue 58; decision 0015, "Branding"): colours as values of the page's declared CSS
  // variables (never CSS of the customer's), links in its header, a footer of plain text, and a
  // logo and a favicon served by their hash.
  await sql`
    alter table divinux.status_pages
      add column theme jsonb not null default '{}' check (jsonb_typeof(theme) = 'object'),
      add column header_links jsonb not null default '[]' check (jsonb_typeof(header_links) = 'array'),
      add column footer_text text check (length(footer_text) <= 500)`.execute(db)
  await db.schema
    .withSchema('divinux')
    .createTable('status_page_assets')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('logo', 'favicon')`))
    .addColumn('content_type', 'text', (col) => col.notNull())
    .addColumn('bytes', 'bytea', (col) => col.notNull())
    .addColumn('sha256', 'text', (col) => col.notNull())
    .addColumn('width', 'integer', (col) => col.notNull())
    .addColumn('height', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index status_page_assets_kind_idx on divinux.status_page_assets (page_id, kind)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.status_page_assets`.execute(db)
  await sql`alter table divinux.status_pages drop column if exists theme, drop column if exists header_links, drop column if exists footer_text`.execute(
    db,
  )
}
