import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // How the product reaches a person: one document per user (channels, routing by priority,
  // quiet hours); a user without a row has the defaults.
  await db.schema
    .withSchema('divinux')
    .createTable('notification_preferences')
    .addColumn('user_id', 'uuid', (col) => col.primaryKey().references('core.users.id').onDelete('cascade'))
    .addColumn('preferences', 'jsonb', (col) => col.notNull())
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('notification_preferences').ifExists().execute()
}
