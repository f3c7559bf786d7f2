import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // What people did with their identity (decision 0022, "User activity"): sign-ins, session
  // refreshes, impersonation and API use, one row per user, UTC day and activity key. API use is
  // one row per product and day (first and last request and how many), not one per request;
  // impersonation one per admin, product and day; each sign-in and refresh its own. Partitioned
  // by month of the day: retention drops whole months.
  await sql`
    create table core.user_activities (
      user_id uuid not null references core.users(id) on delete cascade,
      day date not null,
      activity_key text not null,
      kind text not null check (kind in ('sign_in', 'session_refresh', 'impersonation', 'api_use')),
      product text not null check (product in ('platform', 'product')),
      acted_by uuid references core.users(id) on delete set null,
      ip text,
      user_agent text,
      first_at timestamptz not null,
      last_at timestamptz not null,
      requests integer not null default 1,
      primary key (user_id, day, activity_key)
    ) partition by range (day)`.execute(db)
  await sql`create index user_activities_last_idx on core.user_activities (user_id, last_at desc)`.execute(db)
  const now = new Date()
  for (let offset = -1; offset <= 2; offset++) {
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1))
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset + 1, 1))
    const name = `user_activities_p${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`
    await sql`
      create table ${sql.id('core', name)} partition of core.user_activities
        for values from (${sql.lit(from.toISOString().slice(0, 10))}) to (${sql.lit(to.toISOString().slice(0, 10))})`.execute(db)
  }
  // The members list shows it without reading the activities.
  await sql`alter table core.users add column last_active_at timestamptz`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.users drop column if exists last_active_at`.execute(db)
  await sql`drop table if exists core.user_activities`.execute(db)
}
