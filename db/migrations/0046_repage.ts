import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An acknowledged alert that stays unresolved this long pages again (PagerDuty's
  // acknowledgement timeout); null: never.
  await sql`alter table divinux.escalation_policies add column ack_timeout_minutes integer check (ack_timeout_minutes between 1 and 1440)`.execute(
    db,
  )
  // An acknowledged escalation with a next_at re-pages then: its acknowledgement timed out or its
  // incident's snooze ended (decision 0019, "Paging again").
  await sql`
    create index alert_escalations_repage_idx on divinux.alert_escalations (next_at)
      where state = 'acknowledged' and next_at is not null`.execute(db)
  await sql`alter table divinux.incidents add column snoozed_until timestamptz`.execute(db)
  // An alert paged again is open again: its timeline says why.
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved', 'escalated', 'escalation_ended', 'silenced',
      'priority_changed', 'command_room_opened', 'reopened'))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.alert_events where type = 'reopened'`.execute(db)
  await sql`alter table divinux.alert_events drop constraint if exists alert_events_type_check`.execute(db)
  await sql`alter table divinux.alert_events add constraint alert_events_type_check
    check (type in ('created', 'occurred', 'acknowledged', 'resolved', 'escalated', 'escalation_ended', 'silenced',
      'priority_changed', 'command_room_opened'))`.execute(db)
  await sql`alter table divinux.incidents drop column snoozed_until`.execute(db)
  await sql`drop index divinux.alert_escalations_repage_idx`.execute(db)
  await sql`update divinux.alert_escalations set next_at = null where state = 'acknowledged'`.execute(db)
  await sql`alter table divinux.escalation_policies drop column ack_timeout_minutes`.execute(db)
}
