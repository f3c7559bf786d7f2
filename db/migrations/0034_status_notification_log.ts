import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A subscriber's notifications, newest first (its delivery log); also what removing a
  // subscriber cascades through.
  await sql`create index status_notifications_subscriber_idx on divinux.status_notifications (subscriber_id, created_at desc)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists divinux.status_notifications_subscriber_idx`.execute(db)
}
