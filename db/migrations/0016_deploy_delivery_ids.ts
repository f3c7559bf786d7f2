import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A pipeline's retry carries its delivery id again: one deploy event per id per organization.
  await db.schema.withSchema('divinux').alterTable('deploy_events').addColumn('delivery_id', 'text').execute()
  await sql`create unique index deploy_events_delivery_idx on divinux.deploy_events (organization_id, delivery_id) where delivery_id is not null`.execute(
    db,
  )
}
