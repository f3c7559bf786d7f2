import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Each product replica's check runner beats every few seconds; a run it leased is taken again
  // once it stops (decision 0016, "Runners that die").
  await sql`
    create table divinux.synthetic_runners (
      id uuid primary key,
      region text not null,
      started_at timestamptz not null default now(),
      heartbeat_at timestamptz not null default now()
    )`.execute(db)
  await sql`alter table divinux.synthetic_runs add column runner_id uuid`.execute(db)
  await sql`create index synthetic_runs_runner_idx on divinux.synthetic_runs (runner_id) where state = 'leased' and runner_id is not null`.execute(
    db,
  )
  // A report's writer beats while it writes; a report whose writer stopped is written again
  // (decision 0018, "A writer that dies").
  await sql`alter table core.reports add column heartbeat_at timestamptz`.execute(db)
  // A message being sent is claimed for a few seconds at a time; a claim that runs out while the
  // message is still pending means its sender died, and it is sent again (decision 0011, "A sender that dies").
  await sql`alter table core.outbox add column claimed_until timestamptz`.execute(db)
  await sql`create index outbox_claimed_idx on core.outbox (claimed_until) where status = 'pending' and claimed_until is not null`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.outbox drop column claimed_until`.execute(db)
  await sql`alter table core.reports drop column heartbeat_at`.execute(db)
  await sql`alter table divinux.synthetic_runs drop column runner_id`.execute(db)
  await sql`drop table divinux.synthetic_runners`.execute(db)
}
