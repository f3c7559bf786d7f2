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
  await sql`update divinux.analyses set subject = 'status_incident' where source_product = 'statuspages'`.execute(db)

  // An investigation asked for again because its incident changed (a service joined, a deploy was rolled back).
  await sql`alter table divinux.analyses drop constraint analyses_trigger_check`.execute(db)
  await sql`
    alter table divinux.analyses add constraint analyses_trigger_check
      check (trigger in ('automatic', 'manual', 'reinvestigation'))`.execute(db)

  // Every step of an investigation (a tool called, the answer) is an event of its analysis.
  await sql`alter table divinux.analysis_events drop constraint analysis_events_type_check`.execute(db)
  await sql`
    alter table divinux.analysis_events add constraint analysis_events_type_check
      check (type in ('requested', 'processing', 'step', 'retry_scheduled', 'completed', 'failed'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.analysis_events where type = 'step'`.execute(db)
  await sql`alter table divinux.analysis_events drop constraint analysis_events_type_check`.execute(db)
  await sql`
    alter table divinux.analysis_events add constraint analysis_events_type_check
      check (type in ('requested', 'processing', 'retry_scheduled', 'completed', 'failed'))`.execute(db)
  await sql`delete from divinux.analyses where trigger = 'reinvestigation'`.execute(db)
  await sql`alter table divinux.analyses drop constraint analyses_trigger_check`.execute(db)
  await sql`alter table divinux.analyses add constraint analyses_trigger_check check (trigger in ('automatic', 'manual'))`.execute(db)
  await sql`alter table divinux.analyses drop column subject`.execute(db)
  await sql`alter table divinux.analyses drop column findings`.execute(db)
  await sql`alter table divinux.deploy_events drop column kind`.execute(db)
}
