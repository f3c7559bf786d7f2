import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A page's banner (its overall status) follows what people declared: published incidents,
  // maintenances and a status set by hand. A component held by its synthetic checks alone shows
  // the checks' state, and colours the banner only where the page asks (decision 0015, "The
  // banner"). `declared_status` is the component's status without its checks' verdicts.
  await sql`alter table divinux.status_pages add column banner_follows_checks boolean not null default false`.execute(db)
  await sql`
    alter table divinux.status_components add column declared_status text not null default 'operational'
      check (declared_status in ('operational', 'under_maintenance', 'degraded_performance', 'partial_outage', 'major_outage'))`.execute(db)
  // A component no check holds declared what it shows; one a check holds declared the worst its
  // published open incidents and active maintenances give it (as statuspages/src/queries/components.ts reads them).
  await sql`update divinux.status_components set declared_status = status where check_statuses = '{}'::jsonb`.execute(db)
  await sql`
    update divinux.status_components c
    set declared_status = coalesce(
      (select held.status
       from (
         select case when i.kind = 'maintenance' then 'under_maintenance' else ic.status end as status
         from divinux.status_incident_components ic
         join divinux.status_incidents i on i.id = ic.incident_id
         where ic.component_id = c.id and i.published
           and ((i.kind = 'incident' and i.status <> 'resolved') or (i.kind = 'maintenance' and i.status in ('in_progress', 'verifying')))
       ) held
       order by array_position(array['operational', 'under_maintenance', 'degraded_performance', 'partial_outage', 'major_outage'], held.status) desc
       limit 1),
      'operational')
    where c.check_statuses <> '{}'::jsonb`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.status_components drop column if exists declared_status`.execute(db)
  await sql`alter table divinux.status_pages drop column if exists banner_follows_checks`.execute(db)
}
