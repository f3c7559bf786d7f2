import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // When the problem began by its sender's clock (Alertmanager's `startsAt`, PagerDuty's
  // `payload.timestamp`, a generic event's `startedAt` or `timestamp`), kept from the event that
  // created the alert and never later than its arrival; null when the sender gives none. A
  // delivery that arrives minutes late still dates the problem by when it began (issue 51).
  await sql`alter table divinux.alerts add column started_at timestamptz`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.alerts drop column if exists started_at`.execute(db)
}
