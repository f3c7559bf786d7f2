import type { Database } from '@svc/db'
import { type ConfigCheck, type DispatchInterest, fireAlert, fireAlerts, type Fired, type Firing } from '../alerts/index.js'
import { enabledConfigs } from './configs/queries.js'

interface Pending {
  check: ConfigCheck
  firing: Firing
  resolve(result: Fired | undefined): void
  reject(error: unknown): void
}

/**
 * One batch at a time per process: deliveries arriving meanwhile form the next one. Measured
 * against two in flight (docs/benchmarks.md): two made smaller batches and fewer events per second.
 */
const MAX_FLUSHES_IN_FLIGHT = 1
const MAX_BATCH = 200

/**
 * Writes the firing events of concurrent deliveries together: one statement, so one round trip
 * and one commit, for every event that arrived while the previous batch was being written
 * (docs/benchmarks.md, bench:ingest). A lone delivery is written at once, as before; nothing
 * waits on a timer. Each delivery still gets its own answer only after its row is committed.
 *
 * Two events of one problem (organization and fingerprint) never share a batch: PostgreSQL
 * refuses an upsert that touches one row twice, so the second waits for the next batch and
 * becomes an occurrence of the first, as it would have arriving alone.
 */
export type FireBatcher = ReturnType<typeof createFireBatcher>

export function createFireBatcher(database: Database, interest: DispatchInterest) {
  const { db } = database
  let queue: Pending[] = []
  let inFlight = 0

  function flush(): void {
    if (queue.length === 0 || inFlight >= MAX_FLUSHES_IN_FLIGHT) return
    const batch: Pending[] = []
    const later: Pending[] = []
    const problems = new Set<string>()
    for (const entry of queue) {
      const problem = `${entry.check.organizationId}\u0000${entry.firing.event.fingerprint}`
      if (batch.length >= MAX_BATCH || problems.has(problem)) later.push(entry)
      else {
        problems.add(problem)
        batch.push(entry)
      }
    }
    queue = later
    inFlight += 1
    void write(batch).finally(() => {
      inFlight -= 1
      flush()
    })
  }

  async function write(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Pending]
      await fireAlert(db, enabledConfigs, interest, only.check, only.firing).then(only.resolve, only.reject)
      return
    }
    try {
      const results = await fireAlerts(database, enabledConfigs, interest, batch)
      batch.forEach((entry, index) => entry.resolve(results[index]))
    } catch {
      // One bad event must not fail its neighbours: each is written alone and answers for itself.
      await Promise.all(
        batch.map((entry) => fireAlert(db, enabledConfigs, interest, entry.check, entry.firing).then(entry.resolve, entry.reject)),
      )
    }
  }

  return {
    fire(check: ConfigCheck, firing: Firing): Promise<Fired | undefined> {
      return new Promise<Fired | undefined>((resolve, reject) => {
        queue.push({ check, firing, resolve, reject })
        flush()
      })
    },
  }
}
