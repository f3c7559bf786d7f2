import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // PagerDuty change events (`POST /v2/change/enqueue`) are recorded as deploys (decision 0024).
  await sql`alter table divinux.deploy_events drop constraint deploy_events_source_check`.execute(db)
  await sql`alter table divinux.deploy_events add constraint deploy_events_source_check check (source in ('generic', 'github', 'pagerduty'))`.execute(
    db,
  )
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.deploy_events where source = 'pagerduty'`.execute(db)
  await sql`alter table divinux.deploy_events drop constraint deploy_events_source_check`.execute(db)
  await sql`alter table divinux.deploy_events add constraint deploy_events_source_check check (source in ('generic', 'github'))`.execute(db)
}
