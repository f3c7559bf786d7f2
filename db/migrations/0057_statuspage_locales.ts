import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The languages a page is read in, its default first (decision 0027); every page so far is English.
  await sql`alter table divinux.status_pages add column locales text[] not null default '{en}' check (cardinality(locales) between 1 and 20)`.execute(
    db,
  )
  // The language a subscriber's e-mails are written in; null: the page's default.
  await sql`alter table divinux.status_subscribers add column locale text`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.status_subscribers drop column locale`.execute(db)
  await sql`alter table divinux.status_pages drop column locales`.execute(db)
}
