import { sql } from 'kysely'
import type { Executor } from '@svc/db'

/**
 * Checks whose due time passed a minute ago and were not taken: their chain of due jobs broke
 * (a job that failed every retry). Each is made due now, returned for its due job to be queued
 * in the same transaction; a due job that turns up after all finds the time changed and does nothing.
 */
export async function takeStuckChecks(db: Executor, now: Date): Promise<Array<{ id: string; nextDueAt: Date }>> {
  const result = await sql<{ id: string }>`
    update divinux.synthetic_checks set next_due_at = ${now}
    where id in (
      select id from divinux.synthetic_checks
      where not paused and next_due_at < now() - interval '1 minute'
      order by next_due_at limit 1000
      for update skip locked
    )
    returning id`.execute(db)
  return result.rows.map((row) => ({ id: row.id, nextDueAt: now }))
}

/**
 * Checks with a region no healthy relay serves any more (its relay stopped reporting) whose
 * state still says something: they are judged again, so that region shows `unknown`, never
 * the passing it last reported.
 */
export async function checksLosingRunners(db: Executor, serviceRegion: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    select c.id from divinux.synthetic_checks c
    where not c.paused and c.state <> 'unknown'
      and exists (
        select 1 from unnest(c.regions) as region
        where region <> ${serviceRegion}
          and not exists (
            select 1 from divinux.synthetic_relays relay
            where relay.organization_id = c.organization_id and region = any(relay.regions)
              and relay.last_heartbeat_at > now() - make_interval(secs => relay.heartbeat_seconds * 3)
          )
      )
    limit 1000`.execute(db)
  return rows.rows.map((row) => row.id)
}
