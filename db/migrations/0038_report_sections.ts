import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The products whose records a report holds (decision 0018, "Reading rule"): chosen from what
  // its requester may read, and needed again by whoever asks for its file. Reports written before
  // this hold every section of their type.
  await sql`alter table core.reports add column sections text[] not null default '{}'`.execute(db)
  await sql`update core.reports set sections = case type
    when 'incidents' then array['alerting'] when 'uptime' then array['statuspages', 'synthetics'] else '{}' end`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table core.reports drop column sections`.execute(db)
}
