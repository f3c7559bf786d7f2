import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // How a person is reached (issue 14): addresses and numbers proven by a six-digit code sent to
  // them, and web-push subscriptions. Only a code's SHA-256 is kept, with its expiry and attempts.
  await db.schema
    .withSchema('divinux')
    .createTable('contact_methods')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('core.users.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull().check(sql`type in ('email', 'sms', 'voice', 'push')`))
    .addColumn('address', 'text', (col) => col.notNull())
    .addColumn('push_keys', 'jsonb')
    .addColumn('label', 'text')
    .addColumn('verified_at', 'timestamptz')
    .addColumn('code_hash', 'text')
    .addColumn('code_expires_at', 'timestamptz')
    .addColumn('code_attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('code_sent_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index contact_methods_once on divinux.contact_methods (user_id, type, address)`.execute(db)
  await sql`create index contact_methods_phone_idx on divinux.contact_methods (address) where type in ('sms', 'voice') and verified_at is not null`.execute(
    db,
  )

  // A page by SMS carries a six-digit code: a reply `ack <code>` from the person's number acknowledges.
  await db.schema.withSchema('divinux').alterTable('alert_ack_links').addColumn('sms_code', 'text').execute()
  await sql`create index alert_ack_links_sms_code_idx on divinux.alert_ack_links (sms_code) where sms_code is not null and used_at is null`.execute(
    db,
  )

  // Providers that report delivery (Twilio's status callbacks) move a sent message to delivered.
  await sql`alter table core.outbox drop constraint if exists outbox_status_check`.execute(db)
  await sql`alter table core.outbox add constraint outbox_status_check check (status in ('pending', 'sent', 'delivered', 'held', 'failed'))`.execute(
    db,
  )
  await sql`create index outbox_provider_message_idx on core.outbox (provider, provider_message_id) where provider_message_id is not null`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists core.outbox_provider_message_idx`.execute(db)
  await sql`update core.outbox set status = 'sent' where status = 'delivered'`.execute(db)
  await sql`alter table core.outbox drop constraint if exists outbox_status_check`.execute(db)
  await sql`alter table core.outbox add constraint outbox_status_check check (status in ('pending', 'sent', 'held', 'failed'))`.execute(db)
  await db.schema.withSchema('divinux').alterTable('alert_ack_links').dropColumn('sms_code').execute()
  await db.schema.withSchema('divinux').dropTable('contact_methods').ifExists().execute()
}
