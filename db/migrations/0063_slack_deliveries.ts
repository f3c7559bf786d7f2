import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Each signed Slack request is acted on once (decision 0020, "Replays"): Slack's signature holds
  // for five minutes, so a captured request could be sent again within them. The hash of its body
  // (which carries Slack's unique trigger_id) is kept for ten minutes, past the signature's window.
  await sql`
    create table divinux.slack_deliveries (
      integration_id uuid not null references divinux.chat_integrations(id) on delete cascade,
      body_sha256 text not null,
      received_at timestamptz not null default now(),
      primary key (integration_id, body_sha256)
    )`.execute(db)
  await sql`create index slack_deliveries_received_idx on divinux.slack_deliveries (integration_id, received_at)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists divinux.slack_deliveries`.execute(db)
}
