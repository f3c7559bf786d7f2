import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('core')
    .createTable('scim_tokens')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    // The first characters of the token, shown so a person can tell tokens apart.
    .addColumn('token_prefix', 'text', (col) => col.notNull())
    // SHA-256 of the whole token, hex; the token itself is never stored.
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute()
  await sql`create index scim_tokens_org_idx on core.scim_tokens (organization_id, created_at desc)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').dropTable('scim_tokens').ifExists().execute()
}
