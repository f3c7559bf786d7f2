import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // How many times a target was asked for help in an organization lately (decision 0019,
  // "Responders"): read on every responder request, so it is an index, not a scan of the links.
  await sql`
    create index incident_alerts_responder_requests_idx on divinux.incident_alerts (organization_id, linked_at desc)
      where rule = 'responder_request'`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists divinux.incident_alerts_responder_requests_idx`.execute(db)
}
