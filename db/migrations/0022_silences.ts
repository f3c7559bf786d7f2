import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Silences (issue 14): alerts matching them while they last are stored and shown but page no one.
  await db.schema
    .withSchema('divinux')
    .createTable('silences')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('comment', 'text', (col) => col.notNull())
    .addColumn('matchers', 'jsonb', (col) => col.notNull())
    .addColumn('starts_at', 'timestamptz', (col) => col.notNull())
    .addColumn('ends_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('silences_range', sql`starts_at < ends_at`)
    .execute()
  await db.schema
    .withSchema('divinux')
    .createIndex('silences_org_ends_idx')
    .on('silences')
    .columns(['organization_id', 'ends_at'])
    .execute()

  // The silence holding a `silenced` escalation; no foreign key, since a deleted silence must
  // still let go of the escalations it held.
  await db.schema.withSchema('divinux').alterTable('alert_escalations').addColumn('silence_id', 'uuid').execute()
  await sql`create index alert_escalations_silence_idx on divinux.alert_escalations (silence_id) where state = 'silenced'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').alterTable('alert_escalations').dropColumn('silence_id').execute()
  await db.schema.withSchema('divinux').dropTable('silences').ifExists().execute()
}
