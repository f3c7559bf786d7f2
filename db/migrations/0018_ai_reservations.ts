import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Room reserved in an organization's AI budget for model calls under way (decision 0012): the
  // most a call can cost before it is made, what it cost once it answered, until its job writes
  // the ledger. A reservation a crashed worker left behind stops counting at `expires_at`.
  await db.schema
    .withSchema('divinux')
    .createTable('ai_reservations')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('reference_id', 'uuid', (col) => col.notNull())
    .addColumn('tokens', 'integer', (col) => col.notNull().check(sql`tokens >= 0`))
    .addColumn('cost_usd', sql`numeric(12, 6)`, (col) => col.notNull().check(sql`cost_usd >= 0`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute()
  await sql`create index ai_reservations_org_idx on divinux.ai_reservations (organization_id, expires_at)`.execute(db)
  await sql`create index ai_reservations_reference_idx on divinux.ai_reservations (organization_id, reference_id)`.execute(db)
}
