import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The order an analysis's events were written in. Their `clock_timestamp()` is not enough: an
  // investigation's steps follow each other within the clock's resolution (a millisecond on the
  // embedded database), and a random id then shuffles them. Existing rows are numbered in the
  // order they are read back, time then id.
  await sql`alter table divinux.analysis_events add column seq bigint`.execute(db)
  await sql`
    update divinux.analysis_events e set seq = ordered.position
      from (select id, row_number() over (order by created_at, id) as position from divinux.analysis_events) ordered
     where e.id = ordered.id`.execute(db)
  await sql`create sequence divinux.analysis_events_seq owned by divinux.analysis_events.seq`.execute(db)
  await sql`select setval('divinux.analysis_events_seq', coalesce((select max(seq) from divinux.analysis_events), 0) + 1, false)`.execute(
    db,
  )
  await sql`alter table divinux.analysis_events alter column seq set default nextval('divinux.analysis_events_seq')`.execute(db)
  await sql`alter table divinux.analysis_events alter column seq set not null`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table divinux.analysis_events drop column if exists seq`.execute(db)
}
