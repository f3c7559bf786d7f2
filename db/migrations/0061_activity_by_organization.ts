import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // API use is recorded per organization (decision 0022, "What an organization sees"): an
  // organization's admins read its members' activity in that organization only, and a member's
  // last activity there. Sign-ins, refreshes and use outside any organization keep a null here and
  // are shown to the person and platform admins alone. Rows written before stay null: what they
  // counted cannot be attributed.
  await sql`alter table core.user_activities add column organization_id uuid`.execute(db)
  await sql`
    create index user_activities_organization_idx on core.user_activities (organization_id, user_id, last_at desc)
      where organization_id is not null`.execute(db)
  // Last activity anywhere is what a member list must not show; the list reads it per
  // organization from the rows above.
  await sql`alter table core.users drop column last_active_at`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.users add column if not exists last_active_at timestamptz`.execute(db)
  await sql`drop index if exists core.user_activities_organization_idx`.execute(db)
  await sql`alter table core.user_activities drop column if exists organization_id`.execute(db)
}
