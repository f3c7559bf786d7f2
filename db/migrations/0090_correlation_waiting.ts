import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The new alerts still waiting for correlation, by organization and alert. Asked as each alert
  // is fired (has its organization one waiting? a storm's first symptoms may join the incident
  // their root is about to open) and as each escalation is claimed (is its alert waiting?): one
  // probe either way, however long the dispatcher's backlog.
  await sql`create index alert_events_waiting_idx on divinux.alert_events (organization_id, alert_id)
    where dispatched_at is null and type = 'created'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists divinux.alert_events_waiting_idx`.execute(db)
}
