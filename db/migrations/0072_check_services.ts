import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A check belongs to a service (issue 55): its failure is an alert of that service (a catalog
  // key or alias, or any name alerts carry), routed and correlated as the service's alerts are.
  await sql`alter table divinux.synthetic_checks add column service text`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.synthetic_checks drop column service`.execute(db)
}
