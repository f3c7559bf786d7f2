import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A status page incident that tells the public about an incident of alerting (its status
  // updates published through the status pages surface); one open per page and incident.
  await sql`
    alter table divinux.status_incidents
      add column alerting_incident_id uuid references divinux.incidents(id) on delete set null`.execute(db)
  await sql`
    create index status_incidents_alerting_incident_idx on divinux.status_incidents (alerting_incident_id)
      where alerting_incident_id is not null`.execute(db)
  // A status page incident a person opened that correlation put in an incident of alerting (the
  // incident's own table, so alerting never writes status pages' rows), with why.
  await sql`
    create table divinux.incident_status_links (
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      status_incident_id uuid not null references divinux.status_incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      rule text not null,
      score real not null,
      matched jsonb not null,
      linked_at timestamptz not null default now(),
      primary key (incident_id, status_incident_id)
    )`.execute(db)
  await sql`create index incident_status_links_status_idx on divinux.incident_status_links (status_incident_id)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table divinux.incident_status_links`.execute(db)
  await sql`drop index divinux.status_incidents_alerting_incident_idx`.execute(db)
  await sql`alter table divinux.status_incidents drop column alerting_incident_id`.execute(db)
}
