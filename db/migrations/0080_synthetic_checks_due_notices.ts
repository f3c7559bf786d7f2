import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Runners sleep until the next check falls due (decision 0032): a statement that creates,
  // resumes or moves checks announces their earliest due time on the channel `svc_due` when it
  // commits, as `synthetics.checks:<epoch ms>`, so every replica's runner wakes for it.
  await sql`
    create function divinux.announce_checks_due() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_due', 'synthetics.checks:' || floor(extract(epoch from min(next_due_at)) * 1000)::bigint)
      from changed_checks where not paused
      having min(next_due_at) is not null;
      return null;
    end $$`.execute(db)
  for (const event of ['insert', 'update'])
    await sql
      .raw(
        `create trigger synthetic_checks_due_${event} after ${event} on divinux.synthetic_checks
         referencing new table as changed_checks for each statement execute function divinux.announce_checks_due()`,
      )
      .execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists synthetic_checks_due_insert on divinux.synthetic_checks`.execute(db)
  await sql`drop trigger if exists synthetic_checks_due_update on divinux.synthetic_checks`.execute(db)
  await sql`drop function if exists divinux.announce_checks_due()`.execute(db)
}
