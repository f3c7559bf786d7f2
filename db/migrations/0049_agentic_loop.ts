import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // What a deploy event records: a release, a configuration change (feature flags, settings)
  // or a rollback to an earlier version. The investigator weighs each differently.
  await sql`
    alter table divinux.deploy_events
      add column kind text not null default 'deploy' check (kind in ('deploy', 'config', 'rollback'))`.execute(db)
  // An investigation's structured findings (suspect deploys, probable cause, evidence), beside
  // the prose columns every analysis has had; and what it investigated (an alert or an incident).
  await sql`alter table divinux.analyses add column findings jsonb`.execute(db)
  await sql`
    alter table divinux.analyses
      add column subject text not null default 'alert' check (subject in ('alert', 'incident', 'status_incident'))`.execute(db)

  // Every step of an investigation (a tool called, the answer) is an event of its analysis.
  await sql`alter table divinux.analysis_events drop constraint analysis_events_type_check`.execute(db)
  await sql`
    alter table divinux.analysis_events add constraint analysis_events_type_check
      check (type in ('requested', 'processing', 'step', 'retry_scheduled', 'completed', 'failed'))`.execute(db)

  // Runbooks: Markdown an organization keeps for its services, versioned (every edit a row).
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
  await sql`create index runbooks_org_idx on divinux.runbooks (organization_id, updated_at desc)`.execute(db)
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
  // investigation, with the inputs it used. A comms draft is published only by a person.
  await sql`
    create table divinux.agent_outputs (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      analysis_id uuid not null references divinux.analyses(id) on delete cascade,
      agent text not null check (agent in ('runbook', 'comms', 'oncall')),
      source_product text not null,
      incident_id uuid not null,
      inputs jsonb not null,
      output jsonb not null,
      published_at timestamptz,
      published_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      unique (analysis_id, agent)
    )`.execute(db)
  await sql`create index agent_outputs_incident_idx on divinux.agent_outputs (organization_id, source_product, incident_id, created_at desc)`.execute(
    db,
  )
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
  await sql`delete from divinux.analysis_events where type = 'step'`.execute(db)
  await sql`alter table divinux.analysis_events drop constraint analysis_events_type_check`.execute(db)
  await sql`
    alter table divinux.analysis_events add constraint analysis_events_type_check
      check (type in ('requested', 'processing', 'retry_scheduled', 'completed', 'failed'))`.execute(db)
  await sql`alter table divinux.analyses drop column subject`.execute(db)
  await sql`alter table divinux.analyses drop column findings`.execute(db)
  await sql`alter table divinux.deploy_events drop column kind`.execute(db)
}
