import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An RCA action item's ticket (issue 56; decision 0031, "Action items as tickets") is a
  // follow-up of no incident: the same sync, the same tracker webhooks, the item it stands for.
  await sql`alter table divinux.incident_follow_ups alter column incident_id drop not null`.execute(db)
  await sql`
    alter table divinux.incident_follow_ups
      add column rca_action_item_id uuid unique references divinux.rca_action_items (id) on delete cascade`.execute(db)
  await sql`
    alter table divinux.incident_follow_ups
      add constraint incident_follow_ups_subject check ((incident_id is null) <> (rca_action_item_id is null))`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from divinux.incident_follow_ups where incident_id is null`.execute(db)
  await sql`alter table divinux.incident_follow_ups drop constraint if exists incident_follow_ups_subject`.execute(db)
  await sql`alter table divinux.incident_follow_ups drop column if exists rca_action_item_id`.execute(db)
  await sql`alter table divinux.incident_follow_ups alter column incident_id set not null`.execute(db)
}
