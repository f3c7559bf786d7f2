import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Repeated firings of one alert are counted on one `occurred` row (decision 0012): a storm of
  // repeats grows a counter, not the timeline. Existing repeats are folded into their first row.
  await db.schema
    .withSchema('divinux')
    .alterTable('alert_events')
    .addColumn('occurrences', 'integer', (col) =>
      col
        .notNull()
        .defaultTo(1)
        .check(sql`occurrences >= 1`),
    )
    .addColumn('last_occurred_at', 'timestamptz')
    .execute()
  await sql`
    with ranked as (
      select id, row_number() over (partition by alert_id order by created_at, id) as position,
        count(*) over (partition by alert_id) as total, max(created_at) over (partition by alert_id) as latest
      from divinux.alert_events where type = 'occurred'
    )
    update divinux.alert_events e set occurrences = ranked.total, last_occurred_at = ranked.latest
    from ranked where e.id = ranked.id and ranked.position = 1`.execute(db)
  await sql`
    delete from divinux.alert_events e using (
      select id, row_number() over (partition by alert_id order by created_at, id) as position
      from divinux.alert_events where type = 'occurred'
    ) ranked where e.id = ranked.id and ranked.position > 1`.execute(db)
  await sql`update divinux.alert_events set last_occurred_at = created_at where type = 'occurred' and last_occurred_at is null`.execute(db)
  await sql`create unique index alert_events_one_occurrence_row on divinux.alert_events (alert_id) where type = 'occurred'`.execute(db)
}
