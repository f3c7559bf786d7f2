import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The organization's correlation rules, one list it replaces whole; no row means the defaults
  // (decision 0019, "Correlation").
  await sql`
    create table divinux.incident_rule_sets (
      organization_id uuid primary key references core.organizations(id) on delete cascade,
      rules jsonb not null,
      updated_by uuid references core.users(id) on delete set null,
      updated_at timestamptz not null default now()
    )`.execute(db)
  // A small map of which service depends on which, kept by the organization: the dependency rule
  // and the deploy rule follow it.
  await sql`
    create table divinux.service_dependencies (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      service text not null,
      depends_on text not null,
      created_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      unique (organization_id, service, depends_on),
      check (service <> depends_on)
    )`.execute(db)
  await sql`create index service_dependencies_depends_on_idx on divinux.service_dependencies (organization_id, depends_on)`.execute(db)
  // Alerts split out of an incident never rejoin it: their fingerprints are excluded from it.
  await sql`
    create table divinux.incident_exclusions (
      incident_id uuid not null references divinux.incidents(id) on delete cascade,
      organization_id uuid not null references core.organizations(id) on delete cascade,
      fingerprint text not null,
      primary key (incident_id, fingerprint)
    )`.execute(db)
  // What correlation looks up on every new alert, kept on the link so it is one index away: the
  // alert's service and fingerprint (neither changes once the alert exists), and whether its
  // incident is open (kept with the incident's status).
  await sql`alter table divinux.incident_alerts add column service text, add column fingerprint text, add column open boolean not null default true`.execute(
    db,
  )
  await sql`
    update divinux.incident_alerts l set service = a.service, fingerprint = a.fingerprint, open = i.status <> 'resolved'
    from divinux.alerts a, divinux.incidents i where a.id = l.alert_id and i.id = l.incident_id`.execute(db)
  await sql`alter table divinux.incident_alerts alter column fingerprint set not null`.execute(db)
  await sql`create index incident_alerts_open_service_idx on divinux.incident_alerts (organization_id, service, linked_at desc) where open`.execute(
    db,
  )
  await sql`create index incident_alerts_open_recent_idx on divinux.incident_alerts (organization_id, linked_at desc) where open`.execute(
    db,
  )
  await sql`create index incident_alerts_fingerprint_idx on divinux.incident_alerts (organization_id, fingerprint)`.execute(db)
  await sql`alter table divinux.incidents add column merged_into uuid references divinux.incidents(id) on delete set null`.execute(db)
  await sql`create index incidents_org_resolved_idx on divinux.incidents (organization_id, resolved_at) where status = 'resolved'`.execute(
    db,
  )
  // An alert that joins an incident already paging pages no one: its escalation is `grouped`.
  await sql`alter table divinux.alert_escalations drop constraint alert_escalations_state_check`.execute(db)
  await sql`
    alter table divinux.alert_escalations add constraint alert_escalations_state_check
      check (state in ('pending', 'active', 'silenced', 'unrouted', 'acknowledged', 'resolved', 'exhausted', 'grouped'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`update divinux.alert_escalations set state = 'acknowledged' where state = 'grouped'`.execute(db)
  await sql`alter table divinux.alert_escalations drop constraint alert_escalations_state_check`.execute(db)
  await sql`
    alter table divinux.alert_escalations add constraint alert_escalations_state_check
      check (state in ('pending', 'active', 'silenced', 'unrouted', 'acknowledged', 'resolved', 'exhausted'))`.execute(db)
  await sql`drop index divinux.incidents_org_resolved_idx`.execute(db)
  await sql`alter table divinux.incident_alerts drop column service, drop column fingerprint, drop column open`.execute(db)
  await sql`alter table divinux.incidents drop column merged_into`.execute(db)
  await sql`drop table divinux.incident_exclusions`.execute(db)
  await sql`drop table divinux.service_dependencies`.execute(db)
  await sql`drop table divinux.incident_rule_sets`.execute(db)
}
