import type { Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A SCIM token may be given an end; past it, it authenticates nothing (decision 0012).
  await db.schema.withSchema('core').alterTable('scim_tokens').addColumn('expires_at', 'timestamptz').execute()
}
