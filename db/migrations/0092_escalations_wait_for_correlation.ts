import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Whether the escalation waits for its alert's correlation: set by the statement that fires the
  // alert (its `created` event went to the event dispatcher), cleared by the dispatcher in the
  // transaction that correlates the alert. The escalator claims the escalations that wait for
  // nothing, in the order of the index below, instead of probing each pending one's event: under
  // a storm's backlog that probe ran for a thousand escalations per claim (decision 0019).
  await sql`alter table divinux.alert_escalations add column awaits_correlation boolean not null default false`.execute(db)
  await sql`update divinux.alert_escalations e set awaits_correlation = true
    where e.state = 'pending' and exists (
      select 1 from divinux.alert_events ev
      where ev.organization_id = e.organization_id and ev.alert_id = e.alert_id and ev.type = 'created' and ev.dispatched_at is null)`.execute(
    db,
  )
  // Every writer of this release says it; the default is for a replica of before, during a
  // rolling upgrade. Its escalations are written waiting for nothing, so a starter of this release
  // may page one before its alert is correlated, for the minutes the upgrade takes: better than
  // its writes failing, or its escalations waiting for a mark that no dispatcher would clear.
  await sql`create index alert_escalations_ready_idx on divinux.alert_escalations (urgent desc, created_at)
    where state = 'pending' and not awaits_correlation`.execute(db)
  await sql`drop index divinux.alert_escalations_pending_urgent_idx`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index alert_escalations_pending_urgent_idx on divinux.alert_escalations (created_at)
    where state = 'pending' and urgent`.execute(db)
  await sql`drop index divinux.alert_escalations_ready_idx`.execute(db)
  await sql`alter table divinux.alert_escalations drop column awaits_correlation`.execute(db)
}
