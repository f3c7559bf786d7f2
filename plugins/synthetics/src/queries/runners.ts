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

/** Why a run leased by a runner that stopped is not run again. */
export const ORPHANED_RUN_ERROR = 'its runner stopped while running it: not run again, so that a due time runs at most once'

/**
 * Runs leased by a runner of this service that stopped beating `staleSeconds` ago (its replica
 * died) are recorded as missed, not run again: a run is leased as it starts, so the runner may
 * have reached the target before it died, and a due time runs at most once (issue 51; decision
 * 0016, "Runners that die"). Their ids are answered; the update takes each run once, whichever
 * replica sweeps first.
 */
export async function abandonOrphanedRuns(db: Executor, staleSeconds: number): Promise<string[]> {
  const result = await sql<{ id: string }>`
    update divinux.synthetic_runs run
    set state = 'missed', leased_until = null, error = ${ORPHANED_RUN_ERROR}
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
