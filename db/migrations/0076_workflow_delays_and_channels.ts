import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Workflows that wait before acting (issue 56; decision 0031, "Delays"): a run's job starts
  // after the delay and evaluates its conditions then.
  await sql`alter table divinux.workflows add column delay_minutes integer not null default 0 check (delay_minutes between 0 and 1440)`.execute(
    db,
  )
  await sql`alter table divinux.workflow_runs add column starts_at timestamptz`.execute(db)
  // Incident channels a workflow asked a Slack app for, where the app does not open one for every incident.
  await sql`
    create table divinux.incident_channel_requests (
      incident_id uuid not null references divinux.incidents (id) on delete cascade,
      integration_id uuid not null references divinux.chat_integrations (id) on delete cascade,
      organization_id uuid not null references core.organizations (id) on delete cascade,
      requested_at timestamptz not null default now(),
      primary key (incident_id, integration_id)
    )`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.incident_channel_requests`.execute(db)
  await sql`alter table divinux.workflow_runs drop column if exists starts_at`.execute(db)
  await sql`alter table divinux.workflows drop column if exists delay_minutes`.execute(db)
}
