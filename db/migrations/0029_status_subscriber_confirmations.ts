import { type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // When the last confirmation link went to an unconfirmed e-mail subscriber: anyone may type an
  // address into a public form, so a new link goes out at most once in a while (issue 15).
  await db.schema.withSchema('divinux').alterTable('status_subscribers').addColumn('confirmation_sent_at', 'timestamptz').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').alterTable('status_subscribers').dropColumn('confirmation_sent_at').execute()
}
