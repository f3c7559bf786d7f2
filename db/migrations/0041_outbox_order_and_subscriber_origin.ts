import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A webhook message waits for the earlier pending ones to its receiver (decision 0011, "Order").
  await sql`create index outbox_pending_recipient_idx on core.outbox (recipient, created_at) where status = 'pending'`.execute(db)
  // The client address a public subscription came from: anonymous webhook subscribers are limited
  // per address and per page (decision 0015, "Subscribers"). Null for those a manager added.
  await sql`alter table divinux.status_subscribers add column created_from inet`.execute(db)
  await sql`create index status_subscribers_created_from_idx on divinux.status_subscribers (created_from, created_at)
    where created_from is not null`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.status_subscribers drop column created_from`.execute(db)
  await sql`drop index core.outbox_pending_recipient_idx`.execute(db)
}
