import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Checks are taken when due by their `next_due_at` itself, no longer by one pg-boss job per due
  // time (decision 0016, "Scheduling"): each runner's tick reads the earliest due times.
  await sql`create index synthetic_checks_due_idx on divinux.synthetic_checks (next_due_at) where not paused`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index divinux.synthetic_checks_due_idx`.execute(db)
}
