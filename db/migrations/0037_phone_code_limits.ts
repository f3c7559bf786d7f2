import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Every verification code sent to a phone number, per person: the hourly and lifetime caps
  // count these, so removing a number and adding it again does not reset them (decision 0012).
  await sql`
    create table divinux.phone_code_sends (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references core.users (id) on delete cascade,
      channel text not null,
      sent_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index phone_code_sends_user_idx on divinux.phone_code_sends (user_id, sent_at)`.execute(db)
  // Wrong codes tried on a method over all its codes (code_attempts counts those of the current one).
  await sql`alter table divinux.contact_methods add column wrong_codes integer not null default 0`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.contact_methods drop column wrong_codes`.execute(db)
  await sql`drop table divinux.phone_code_sends`.execute(db)
}
