import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // What the retention jobs delete by (decision 0022): the oldest rows of each kind, found by an
  // index range instead of a scan of the whole table per batch.
  await sql`create index alert_events_created_idx on divinux.alert_events (created_at)`.execute(db)
  await sql`create index notification_attempts_created_idx on divinux.notification_attempts (created_at)`.execute(db)
  await sql`create index webhook_deliveries_created_idx on divinux.webhook_deliveries (created_at)`.execute(db)
  await sql`create index outbound_webhook_deliveries_created_idx on divinux.outbound_webhook_deliveries (created_at)`.execute(db)
  await sql`create index analysis_events_created_idx on divinux.analysis_events (created_at)`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const index of [
    'divinux.alert_events_created_idx',
    'divinux.notification_attempts_created_idx',
    'divinux.webhook_deliveries_created_idx',
    'divinux.outbound_webhook_deliveries_created_idx',
    'divinux.analysis_events_created_idx',
  ])
    await sql`drop index if exists ${sql.raw(index)}`.execute(db)
}
