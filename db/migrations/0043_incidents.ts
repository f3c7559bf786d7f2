import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An incident groups what went wrong and is worked by people (decision 0019). Its number is the
  // organization's own sequence (INC-1, INC-2, …), given under an advisory lock.
  await sql`
    create table divinux.incidents (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      number integer not null,
      title text not null,
      summary text,
      severity text not null check (severity in ('SEV1', 'SEV2', 'SEV3', 'SEV4')),
      status text not null default 'triage'
        check (status in ('triage', 'investigating', 'identified', 'monitoring', 'resolved')),
      opened_by text not null check (opened_by in ('person', 'alert')),
      declared_by uuid references core.users(id) on delete set null,
      started_at timestamptz not null default now(),
      detected_at timestamptz not null default now(),
      acknowledged_at timestamptz,
      mitigated_at timestamptz,
      resolved_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (organization_id, number)
    )`.execute(db)
  await sql`create index incidents_org_created_idx on divinux.incidents (organization_id, created_at desc, id desc)`.execute(db)
  await sql`create index incidents_org_open_idx on divinux.incidents (organization_id) where status <> 'resolved'`.execute(db)
  // One person per role of an incident: commander, communications, scribe, or a name of the organization's own.
  await sql`
    create table divinux.incident_roles (
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      role text not null check (role ~ '^[a-z][a-z0-9_-]{0,39}$'),
      user_id uuid not null references core.users(id) on delete cascade,
      assigned_by uuid references core.users(id) on delete set null,
      assigned_at timestamptz not null default now(),
      primary key (incident_id, role)
    )`.execute(db)
  // An alert belongs to at most one incident; the link says why it was made (rule, score, values).
  await sql`
    create table divinux.incident_alerts (
      alert_id uuid primary key references divinux.alerts(id) on delete cascade,
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      rule text not null,
      score real not null default 1,
      matched jsonb not null default '{}',
      linked_by uuid references core.users(id) on delete set null,
      linked_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index incident_alerts_incident_idx on divinux.incident_alerts (incident_id, linked_at, alert_id)`.execute(db)
  // What people and the system did, newest first, paged; `seq` orders the entries one change writes together.
  await sql`
    create table divinux.incident_timeline (
      id uuid primary key default gen_random_uuid(),
      seq bigint generated always as identity,
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      kind text not null,
      body text,
      data jsonb not null default '{}',
      author_id uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index incident_timeline_incident_idx on divinux.incident_timeline (incident_id, created_at desc, seq desc)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table divinux.incident_timeline`.execute(db)
  await sql`drop table divinux.incident_alerts`.execute(db)
  await sql`drop table divinux.incident_roles`.execute(db)
  await sql`drop table divinux.incidents`.execute(db)
}
