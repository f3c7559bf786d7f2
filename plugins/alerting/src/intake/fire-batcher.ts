import { createGroupCommit, type Database } from '@svc/db'
import {
  type ConfigCheck,
  type DispatchInterest,
  fireAlert,
  fireAlerts,
  type Fired,
  type Firing,
  URGENT_PRIORITIES,
} from '../alerts/index.js'
import { enabledConfigs } from './configs/queries.js'
import type { WriteOrdering, Writing } from './write-order.js'

const MAX_BATCH = 200

/**
 * Writes the firing events of concurrent deliveries together (a group commit): one statement,
 * so one round trip and one commit, for every event that arrived while the previous batch was
 * being written (decision 0007). Each delivery still gets its own answer only
 * after its row is committed.
 *
 * Two events of one problem (organization and fingerprint) never share a batch: PostgreSQL
 * refuses an upsert that touches one row twice, so the second waits for the next batch and
 * becomes an occurrence of the first, as it would have arriving alone.
 */
export type FireBatcher = ReturnType<typeof createFireBatcher>

export function createFireBatcher(database: Database, interest: DispatchInterest, { inOrder }: WriteOrdering) {
  /** What the write order needs to know of firing events written together. */
  const writing = (entries: Array<{ check: ConfigCheck; firing: Firing }>): Writing => ({
    organizations: entries.map(({ check }) => check.organizationId),
    urgent: entries.flatMap(({ check, firing }) => (URGENT_PRIORITIES.has(firing.priority) ? [check.organizationId] : [])),
  })
  const commits = createGroupCommit<{ check: ConfigCheck; firing: Firing }, Fired | undefined>({
    writeBatch: (batch) => inOrder(writing(batch), () => fireAlerts(database, enabledConfigs, interest, batch)),
    writeOne: (entry) => inOrder(writing([entry]), () => fireAlert(database.db, enabledConfigs, interest, entry.check, entry.firing)),
    maxBatch: MAX_BATCH,
    keyOf: ({ check, firing }) => `${check.organizationId}\u0000${firing.event.fingerprint}`,
  })
  return {
    fire: (check: ConfigCheck, firing: Firing): Promise<Fired | undefined> => commits.write({ check, firing }),
    /** A delivery's own transaction, in order with the batches (write-order.ts). */
    inOrder,
  }
}
