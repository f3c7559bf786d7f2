import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Runbooks: Markdown an organization keeps for its services, tagged by services and labels,
  // versioned (every edit keeps the text it replaced).
  await sql`
    create table divinux.runbooks (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      title text not null,
      body text not null,
      services text[] not null default '{}',
      labels jsonb not null default '{}',
      version integer not null default 1,
      created_by uuid references core.users(id) on delete set null,
      updated_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index runbooks_org_idx on divinux.runbooks (organization_id, updated_at desc, id)`.execute(db)
  await sql`create index runbooks_services_idx on divinux.runbooks using gin (services)`.execute(db)
  await sql`
    create table divinux.runbook_versions (
      runbook_id uuid not null references divinux.runbooks(id) on delete cascade,
      version integer not null,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      title text not null,
      body text not null,
      services text[] not null,
      labels jsonb not null,
      created_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      primary key (runbook_id, version)
    )`.execute(db)

  // What the runbook, comms and on-call agents made of an investigation: one row per agent and
  // investigation, with the inputs it used.
  await sql`
    create table divinux.agent_outputs (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      analysis_id uuid not null references divinux.analyses(id) on delete cascade,
      agent text not null check (agent in ('runbook', 'comms', 'oncall')),
      inputs jsonb not null,
      output jsonb not null,
      created_at timestamptz not null default now(),
      unique (analysis_id, agent)
    )`.execute(db)
  await sql`create index agent_outputs_org_idx on divinux.agent_outputs (organization_id, analysis_id)`.execute(db)

  // Which agents an organization runs; no row: all of them.
  await sql`
    create table divinux.agent_settings (
      organization_id uuid primary key references core.organizations(id) on delete cascade,
      investigator boolean not null default true,
      runbook boolean not null default true,
      comms boolean not null default true,
      oncall boolean not null default true,
      updated_by uuid references core.users(id) on delete set null,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table divinux.agent_settings`.execute(db)
  await sql`drop table divinux.agent_outputs`.execute(db)
  await sql`drop table divinux.runbook_versions`.execute(db)
  await sql`drop table divinux.runbooks`.execute(db)
}
