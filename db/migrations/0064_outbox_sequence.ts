import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The order a webhook receiver gets its messages in (decision 0011, "Order"): the order they
  // were written. `created_at` is its transaction's start, the same for every row of one
  // transaction and not the order transactions commit in, so a later message could sort first
  // (issue 51). A sequence value is drawn as each row is written.
  await sql`alter table core.outbox add column seq bigint generated always as identity`.execute(db)
  await sql`drop index if exists core.outbox_pending_recipient_idx`.execute(db)
  await sql`create index outbox_pending_recipient_idx on core.outbox (recipient, seq) where status = 'pending'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists core.outbox_pending_recipient_idx`.execute(db)
  await sql`alter table core.outbox drop column if exists seq`.execute(db)
  await sql`create index outbox_pending_recipient_idx on core.outbox (recipient, created_at) where status = 'pending'`.execute(db)
}
