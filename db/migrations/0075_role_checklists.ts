import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Checklists per incident role (issue 56; decision 0031): the tasks whoever holds a role works
  // through, set by the organization; and on each incident, who ticked which task and when.
  await sql`
    create table divinux.incident_checklists (
      organization_id uuid not null references core.organizations (id) on delete cascade,
      role text not null check (role ~ '^[a-z][a-z0-9_-]{0,39}$'),
      tasks text[] not null,
      updated_by uuid references core.users (id) on delete set null,
      updated_at timestamptz not null default now(),
      primary key (organization_id, role)
    )`.execute(db)
  await sql`
    create table divinux.incident_task_ticks (
      incident_id uuid not null references divinux.incidents (id) on delete cascade,
      organization_id uuid not null references core.organizations (id) on delete cascade,
      role text not null,
      task text not null,
      done_by uuid references core.users (id) on delete set null,
      done_at timestamptz not null default now(),
      primary key (incident_id, role, task)
    )`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.incident_task_ticks`.execute(db)
  await sql`drop table if exists divinux.incident_checklists`.execute(db)
}
