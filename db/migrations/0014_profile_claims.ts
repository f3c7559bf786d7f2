import type { Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The ID token's profile claims (name, given_name, family_name), written at sign-in; the
  // user's own display name stays theirs to edit.
  await db.schema
    .withSchema('core')
    .alterTable('users')
    .addColumn('name', 'text')
    .addColumn('given_name', 'text')
    .addColumn('family_name', 'text')
    .execute()
}
