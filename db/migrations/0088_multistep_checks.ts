import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Multi-step API checks (issue 59): requests in order, each handing values to the next. Their
  // definition is the check's `request` and their step results live in the run's `attempts`, as
  // every kind's do; only the kind is new.
  await sql`alter table divinux.synthetic_checks drop constraint synthetic_checks_kind_check`.execute(db)
  await sql`alter table divinux.synthetic_checks add constraint synthetic_checks_kind_check
    check (kind in ('http', 'multistep', 'tcp', 'dns', 'tls', 'heartbeat'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.synthetic_checks where kind = 'multistep'`.execute(db)
  await sql`alter table divinux.synthetic_checks drop constraint synthetic_checks_kind_check`.execute(db)
  await sql`alter table divinux.synthetic_checks add constraint synthetic_checks_kind_check
    check (kind in ('http', 'tcp', 'dns', 'tls', 'heartbeat'))`.execute(db)
}
