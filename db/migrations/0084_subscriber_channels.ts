import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // More ways to follow a status page (issue 58; decision 0015, "Subscribers"). One-click
  // unsubscribe for e-mail (RFC 2369 and RFC 8058): a message a subscriber can leave carries its
  // unsubscribe URL, which the SMTP provider writes as List-Unsubscribe and List-Unsubscribe-Post.
  await sql`alter table core.outbox add column unsubscribe_url text`.execute(db)
  // Slack and Microsoft Teams subscribers: a channel's incoming webhook URL, which is its own
  // credential (nothing signs what is posted to it), so they keep a URL and no secret.
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_kind_check`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_target_check`.execute(db)
  await sql`
    alter table divinux.status_subscribers
      add constraint status_subscribers_kind_check check (kind in ('email', 'webhook', 'slack', 'teams')),
      add constraint status_subscribers_target_check check (
        (kind = 'email' and email is not null and url is null)
        or (kind = 'webhook' and url is not null and secret is not null and email is null)
        or (kind in ('slack', 'teams') and url is not null and secret is null and email is null))`.execute(db)
  await sql`create unique index status_subscribers_chat_url_idx on divinux.status_subscribers (page_id, kind, url) where kind in ('slack', 'teams')`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.status_subscribers where kind in ('slack', 'teams')`.execute(db)
  await sql`drop index if exists divinux.status_subscribers_chat_url_idx`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_kind_check`.execute(db)
  await sql`alter table divinux.status_subscribers drop constraint status_subscribers_target_check`.execute(db)
  await sql`
    alter table divinux.status_subscribers
      add constraint status_subscribers_kind_check check (kind in ('email', 'webhook')),
      add constraint status_subscribers_target_check check (
        (kind = 'email' and email is not null and url is null)
        or (kind = 'webhook' and url is not null and secret is not null and email is null))`.execute(db)
  await sql`alter table core.outbox drop column if exists unsubscribe_url`.execute(db)
}
