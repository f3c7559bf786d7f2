import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Each user's on-call iCalendar feed (issue 14): calendar apps cannot sign in, so the feed URL
  // carries a token; only its SHA-256 is kept, and rotating it replaces the row's hash.
  await db.schema
    .withSchema('divinux')
    .createTable('calendar_feeds')
    .addColumn('user_id', 'uuid', (col) => col.primaryKey().references('core.users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('rotated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('calendar_feeds').ifExists().execute()
}
