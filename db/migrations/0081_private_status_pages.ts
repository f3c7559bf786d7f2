import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Private status pages (issue 58; decision 0015, "Private pages"): read only by the
  // organization's members and by people of the page's allowed e-mail domains, who sign in with a
  // link sent by e-mail. Domains are stored lower-case, without a leading `@`.
  await sql`
    alter table divinux.status_pages
      add column visibility text not null default 'public' check (visibility in ('public', 'private')),
      add column viewer_email_domains text[] not null default '{}'
        check (cardinality(viewer_email_domains) <= 20)`.execute(db)

  // A sign-in link: its token is sent by e-mail and only its hash is kept; it is used once.
  await db.schema
    .withSchema('divinux')
    .createTable('status_page_access_links')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute()
  // The links one address asked for lately (the per-address cap), and the expired ones to delete.
  await sql`create index status_page_access_links_email_idx on divinux.status_page_access_links (page_id, lower(email), created_at)`.execute(
    db,
  )
  await sql`create index status_page_access_links_expires_idx on divinux.status_page_access_links (expires_at)`.execute(db)

  // A reader signed in through a link: the browser holds the token in a cookie, the row its hash.
  await db.schema
    .withSchema('divinux')
    .createTable('status_page_viewer_sessions')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('page_id', 'uuid', (col) => col.notNull().references('divinux.status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute()
  await sql`create index status_page_viewer_sessions_expires_idx on divinux.status_page_viewer_sessions (expires_at)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.status_page_viewer_sessions`.execute(db)
  await sql`drop table if exists divinux.status_page_access_links`.execute(db)
  await sql`alter table divinux.status_pages drop column if exists viewer_email_domains, drop column if exists visibility`.execute(db)
}
