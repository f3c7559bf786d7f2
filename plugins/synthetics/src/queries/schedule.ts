import { sql } from 'kysely'
import type { Executor } from '@svc/db'

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
