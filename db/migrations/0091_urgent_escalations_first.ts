import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Whether the escalation's alert was P1 or P2 when it fired: the escalator starts those first,
  // so that in a flood a P1's page never waits behind thousands of P3 and P4 escalations.
  await sql`alter table divinux.alert_escalations add column urgent boolean not null default false`.execute(db)
  await sql`create index alert_escalations_pending_urgent_idx on divinux.alert_escalations (created_at)
    where state = 'pending' and urgent`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.alert_escalations drop column urgent`.execute(db)
}
