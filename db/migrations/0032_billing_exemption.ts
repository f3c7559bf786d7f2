import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Organizations created while billing was off (self-hosted use, and every organization that
  // predates billing) have every product; one created with billing on needs a plan to write.
  await db.schema
    .withSchema('core')
    .alterTable('organizations')
    .addColumn('billing_exempt', 'boolean', (col) => col.notNull().defaultTo(sql`true`))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').alterTable('organizations').dropColumn('billing_exempt').execute()
}
