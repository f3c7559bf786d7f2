import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Browser checks (issue 59): a Playwright script run in Chromium. The script is the check's
  // `request` and what a run saw lives in its `attempts`, as for every kind; what is new is the
  // kind, the screenshots, and which relays can run one.
  await sql`alter table divinux.synthetic_checks drop constraint synthetic_checks_kind_check`.execute(db)
  await sql`alter table divinux.synthetic_checks add constraint synthetic_checks_kind_check
    check (kind in ('http', 'multistep', 'browser', 'tcp', 'dns', 'tls', 'heartbeat'))`.execute(db)

  // A screenshot belongs to one attempt of one run and goes with it (runs are removed past
  // retention). Its link is signed with a key of its own: a link that leaks opens this image
  // only, and no key shared by the replicas has to be configured for it.
  await sql`create table divinux.synthetic_screenshots (
    id uuid primary key default gen_random_uuid(),
    run_id uuid not null references divinux.synthetic_runs (id) on delete cascade,
    organization_id uuid not null,
    attempt integer not null check (attempt >= 0 and attempt < 10),
    png bytea not null,
    link_key bytea not null,
    created_at timestamptz not null default now(),
    unique (run_id, attempt)
  )`.execute(db)

  // Whether a relay said, when it last called, that it has Chromium: a relay of before this
  // version says nothing and runs no browser check.
  await sql`alter table divinux.synthetic_relays add column browser boolean not null default false`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.synthetic_relays drop column browser`.execute(db)
  await sql`drop table divinux.synthetic_screenshots`.execute(db)
  await sql`delete from divinux.synthetic_checks where kind = 'browser'`.execute(db)
  await sql`alter table divinux.synthetic_checks drop constraint synthetic_checks_kind_check`.execute(db)
  await sql`alter table divinux.synthetic_checks add constraint synthetic_checks_kind_check
    check (kind in ('http', 'multistep', 'tcp', 'dns', 'tls', 'heartbeat'))`.execute(db)
}
