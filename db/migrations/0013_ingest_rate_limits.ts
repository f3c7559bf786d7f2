import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Ingestion is limited per webhook config (decision 0012); null takes INGEST_RATE_LIMIT_MAX.
  await db.schema
    .withSchema('divinux')
    .alterTable('webhook_configs')
    .addColumn('rate_limit_per_minute', 'integer', (col) => col.check(sql`rate_limit_per_minute between 1 and 1000000`))
    .execute()
}
