import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Severities an organization names, describes and orders (issue 56; decision 0031,
  // "Severities"). No rows: the defaults SEV1 to SEV4. Each says the alert priority it pages at.
  await sql`
    create table divinux.incident_severities (
      organization_id uuid not null references core.organizations (id) on delete cascade,
      key text not null check (key ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$'),
      name text not null check (length(name) between 1 and 60),
      description text,
      rank smallint not null check (rank >= 1),
      priority text not null check (priority in ('P1', 'P2', 'P3', 'P4')),
      updated_by uuid references core.users (id) on delete set null,
      updated_at timestamptz not null default now(),
      primary key (organization_id, key),
      unique (organization_id, rank)
    )`.execute(db)
  // The organization's list decides what an incident's severity may be, checked where it is set.
  await sql`alter table divinux.incidents drop constraint if exists incidents_severity_check`.execute(db)
  await sql`alter table divinux.incidents add constraint incidents_severity_key check (severity ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$')`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.incidents drop constraint if exists incidents_severity_key`.execute(db)
  await sql`drop table if exists divinux.incident_severities`.execute(db)
}
