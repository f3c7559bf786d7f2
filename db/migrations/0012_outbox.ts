import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Every outbound message, written in the transaction of the change that caused it and then
  // delivered by a job (ARCHITECTURE.md, "Between surfaces"). A message no provider can carry
  // stays here as `held`: readable, never dropped.
  await db.schema
    .withSchema('core')
    .createTable('outbox')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.references('core.organizations.id').onDelete('set null'))
    .addColumn('channel', 'text', (col) => col.notNull().check(sql`channel in ('email', 'sms', 'voice', 'push', 'chat', 'webhook')`))
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('recipient', 'text', (col) => col.notNull())
    .addColumn('subject', 'text')
    .addColumn('body_text', 'text', (col) => col.notNull())
    .addColumn('body_html', 'text')
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'sent', 'held', 'failed')`),
    )
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('provider', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .execute()
  await db.schema.withSchema('core').createIndex('outbox_status_created_at').on('outbox').columns(['status', 'created_at']).execute()
  await db.schema.withSchema('core').createIndex('outbox_organization_id').on('outbox').column('organization_id').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').dropTable('outbox').ifExists().execute()
}
