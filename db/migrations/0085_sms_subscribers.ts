import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // SMS subscribers of status pages (issue 58; decision 0015, "Subscribers"): a phone number in
  // E.164, confirmed by a code texted to it (double opt-in). The code's hash is kept as an e-mail's
  // link token is, and wrong codes are counted so a code cannot be guessed.
  await sql`alter table divinux.status_subscribers add column phone text, add column confirm_attempts integer not null default 0`.execute(
    db,
  )
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_kind_check`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_target_check`.execute(db)
  await sql`
    alter table divinux.status_subscribers
      add constraint status_subscribers_kind_check check (kind in ('email', 'webhook', 'slack', 'teams', 'sms')),
      add constraint status_subscribers_target_check check (
        (kind = 'email' and email is not null and url is null and phone is null)
        or (kind = 'webhook' and url is not null and secret is not null and email is null and phone is null)
        or (kind in ('slack', 'teams') and url is not null and secret is null and email is null and phone is null)
        or (kind = 'sms' and phone is not null and email is null and url is null and secret is null))`.execute(db)
  await sql`create unique index status_subscribers_phone_idx on divinux.status_subscribers (page_id, phone) where kind = 'sms'`.execute(db)
  // STOP from a number ends its subscriptions on every page.
  await sql`create index status_subscribers_phone_lookup_idx on divinux.status_subscribers (phone) where kind = 'sms'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.status_subscribers where kind = 'sms'`.execute(db)
  await sql`drop index if exists divinux.status_subscribers_phone_idx`.execute(db)
  await sql`drop index if exists divinux.status_subscribers_phone_lookup_idx`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_kind_check`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_target_check`.execute(db)
  await sql`
    alter table divinux.status_subscribers
      add constraint status_subscribers_kind_check check (kind in ('email', 'webhook', 'slack', 'teams')),
      add constraint status_subscribers_target_check check (
        (kind = 'email' and email is not null and url is null)
        or (kind = 'webhook' and url is not null and secret is not null and email is null)
        or (kind in ('slack', 'teams') and url is not null and secret is null and email is null))`.execute(db)
  await sql`alter table divinux.status_subscribers drop column phone, drop column confirm_attempts`.execute(db)
}
