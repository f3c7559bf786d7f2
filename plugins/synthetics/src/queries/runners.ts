import { sql } from 'kysely'
import type { Executor } from '@svc/db'

/** This replica's runner is alive: its row, created at the first beat. */
export async function beat(db: Executor, runnerId: string, region: string): Promise<void> {
  await db
    .insertInto('divinux.syntheticRunners')
    .values({ id: runnerId, region })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeatAt: sql<Date>`now()` }))
    .execute()
}

/**
 * Runs leased by a runner of this service that stopped beating `staleSeconds` ago (its replica
 * died) go back to the queue, where the next runner's tick leases them; their ids are answered.
 * The update takes each run once, whichever replica sweeps first.
 */
export async function requeueOrphanedRuns(db: Executor, staleSeconds: number): Promise<string[]> {
  const result = await sql<{ id: string }>`
    update divinux.synthetic_runs run
    set state = 'queued', runner_id = null, leased_until = null, started_at = null
    where run.state = 'leased' and run.relay_id is null and run.runner_id is not null
      and not exists (
        select 1 from divinux.synthetic_runners runner
        where runner.id = run.runner_id and runner.heartbeat_at > now() - make_interval(secs => ${staleSeconds}))
    returning run.id`.execute(db)
  return result.rows.map((row) => row.id)
}

/** Rows of runners gone for a day: nothing refers to them any more. */
export async function removeGoneRunners(db: Executor): Promise<void> {
  await db
    .deleteFrom('divinux.syntheticRunners')
    .where('heartbeatAt', '<', sql<Date>`now() - interval '1 day'`)
    .execute()
}
