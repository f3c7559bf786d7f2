import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Where the person paged goes next, as the sender gives it with the event that created the
  // alert: the runbook (Alertmanager's `runbook_url` annotation, a generic event's `runbookUrl`)
  // and the source's own view of the problem (Alertmanager's `generatorURL`, PagerDuty's
  // `client_url`, a generic event's `sourceUrl`). http(s) only; null when the sender gives none.
  await sql`alter table divinux.alerts add column runbook_url text, add column source_url text`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.alerts drop column if exists runbook_url, drop column if exists source_url`.execute(db)
}
