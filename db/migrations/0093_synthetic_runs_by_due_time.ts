import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Raw runs are found by their due time for the hourly roll-up and for retention, both over every
  // check: a BRIN index, since runs are written in due-time order. It replaces the B-tree on
  // `created_at` (retention's, which the roll-up could not use), which every run paid for twice:
  // once when taken, once when its result was recorded (decision 0032, "Recording runs").
  await sql`create index synthetic_runs_due_time_idx on divinux.synthetic_runs using brin (due_at)`.execute(db)
  await sql`drop index divinux.synthetic_runs_age_idx`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index synthetic_runs_age_idx on divinux.synthetic_runs (created_at)`.execute(db)
  await sql`drop index divinux.synthetic_runs_due_time_idx`.execute(db)
}
