import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Ticket trackers an organization connects (issue 56; decision 0031): Jira Cloud or Linear, with
  // their credential and the secret their webhooks are signed with, both sealed with the secrets
  // key as check secrets are (alerting's destinations module).
  await sql`
    create table divinux.tracker_integrations (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      name text not null,
      kind text not null check (kind in ('jira', 'linear')),
      site_url text,
      account_email text,
      project text not null,
      issue_type text,
      credential bytea not null,
      webhook_secret bytea not null,
      enabled boolean not null default true,
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (organization_id, name)
    )`.execute(db)
  // An incident's follow-ups (the incidents module): what is left to do after it, each with the
  // ticket a tracker keeps for it and that ticket's status as the tracker last said.
  await sql`
    create table divinux.incident_follow_ups (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      incident_id uuid not null references divinux.incidents (id) on delete cascade,
      title text not null,
      description text,
      status text not null default 'open' check (status in ('open', 'done')),
      tracker_id uuid references divinux.tracker_integrations (id) on delete set null,
      sync_status text not null default 'none' check (sync_status in ('none', 'pending', 'synced', 'failed')),
      sync_error text,
      ticket_id text,
      ticket_key text,
      ticket_url text,
      ticket_status text,
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index incident_follow_ups_incident_idx on divinux.incident_follow_ups (incident_id, created_at)`.execute(db)
  await sql`create index incident_follow_ups_ticket_idx on divinux.incident_follow_ups (tracker_id, ticket_id)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.incident_follow_ups`.execute(db)
  await sql`drop table if exists divinux.tracker_integrations`.execute(db)
}
