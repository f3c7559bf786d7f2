import { sql, type Kysely } from 'kysely'

const INCIDENT_TRIGGERS = [
  'incident.declared',
  'incident.status_changed',
  'incident.severity_changed',
  'incident.field_changed',
  'incident.role_assigned',
  'incident.resolved',
]
const OLD_TRIGGERS = ['alert.created', 'alert.acknowledged', 'alert.resolved', 'deploy.recorded']
const triggerCheck = (triggers: string[]) => sql`check (trigger in (${sql.join(triggers.map((trigger) => sql.lit(trigger)))}))`

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Incidents an organization shapes (issue 56; decision 0031): custom fields, and types that say
  // which fields an incident of the type needs and when.
  await sql`
    create table divinux.incident_fields (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      key text not null check (key ~ '^[a-z][a-z0-9_]{0,39}$'),
      name text not null,
      description text,
      kind text not null check (kind in ('text', 'number', 'select', 'multi_select', 'user', 'service', 'link')),
      options text[] not null default '{}',
      required text not null default 'never' check (required in ('never', 'declare', 'resolve')),
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (organization_id, key)
    )`.execute(db)
  await sql`
    create table divinux.incident_types (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      key text not null check (key ~ '^[a-z][a-z0-9_-]{0,39}$'),
      name text not null,
      description text,
      fields jsonb not null default '[]',
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (organization_id, key)
    )`.execute(db)
  await sql`alter table divinux.incidents add column type_id uuid references divinux.incident_types (id) on delete set null`.execute(db)
  await sql`alter table divinux.incidents add column fields jsonb not null default '{}'`.execute(db)
  await sql`create index incidents_fields_idx on divinux.incidents using gin (fields jsonb_path_ops)`.execute(db)

  // Workflows on incident changes: the incident timeline's changes are their events, claimed
  // through dispatched_at as the alert timeline's are (null: not yet handed to workflows). Rows
  // already written are history, not events.
  await sql`alter table divinux.incident_timeline add column dispatched_at timestamptz default now()`.execute(db)
  await sql`create index incident_timeline_undispatched_idx on divinux.incident_timeline (seq) where dispatched_at is null`.execute(db)
  await sql`alter table divinux.workflow_runs add column incident_id uuid references divinux.incidents (id) on delete set null`.execute(db)
  await sql`create index workflow_runs_incident_idx on divinux.workflow_runs (workflow_id, incident_id) where incident_id is not null`.execute(
    db,
  )
  await sql`alter table divinux.workflows add column once_per_incident boolean not null default false`.execute(db)
  await sql`alter table divinux.workflows drop constraint workflows_trigger_check`.execute(db)
  await sql`alter table divinux.workflows add constraint workflows_trigger_check ${triggerCheck([...OLD_TRIGGERS, ...INCIDENT_TRIGGERS])}`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.workflows where trigger like 'incident.%'`.execute(db)
  await sql`alter table divinux.workflows drop constraint workflows_trigger_check`.execute(db)
  await sql`alter table divinux.workflows add constraint workflows_trigger_check ${triggerCheck(OLD_TRIGGERS)}`.execute(db)
  await sql`alter table divinux.workflows drop column once_per_incident`.execute(db)
  await sql`alter table divinux.workflow_runs drop column incident_id`.execute(db)
  await sql`alter table divinux.incident_timeline drop column dispatched_at`.execute(db)
  await sql`alter table divinux.incidents drop column fields`.execute(db)
  await sql`alter table divinux.incidents drop column type_id`.execute(db)
  await sql`drop table if exists divinux.incident_types`.execute(db)
  await sql`drop table if exists divinux.incident_fields`.execute(db)
}
