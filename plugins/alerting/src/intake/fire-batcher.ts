import { createGroupCommit, type Database, type Executor } from '@svc/db'
import { type AlertCreated, type AlertPriority, publishAll } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
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

/** A firing event to write, and whether its alert, if new, announces itself (`alert.created`, for an analysis). */
interface Entry {
  check: ConfigCheck
  firing: Firing
  announces?: { autoAnalysis: boolean }
}

/** The `alert.created` event of a new alert that announces itself, for the insights surface to analyze. */
export const alertCreated = (organizationId: string, alertId: string, priority: string, autoAnalysis: boolean): AlertCreated => ({
  organizationId,
  alertId,
  priority: priority as AlertPriority,
  autoAnalysis,
})

/**
 * Writes the firing events of concurrent deliveries together (a group commit): one statement,
 * so one round trip and one commit, for every event that arrived while the previous batch was
 * being written (decision 0007). Each delivery still gets its own answer only
 * after its row is committed.
 *
 * A batch with an alert that announces itself (a P1 or P2, or a config asking for an analysis of
 * every alert) is written in a transaction with the announcements, which commit with the alerts;
 * such an alert was written alone in a transaction of its own before, committing after the
 * symptoms fired just after it (decision 0019, "Correlation"), and at 500 alerts a second a
 * quarter of the alerts took one each.
 *
 * Two events of one problem (organization and fingerprint) never share a batch: PostgreSQL
 * refuses an upsert that touches one row twice, so the second waits for the next batch and
 * becomes an occurrence of the first, as it would have arriving alone.
 */
export type FireBatcher = ReturnType<typeof createFireBatcher>

export function createFireBatcher(database: Database, interest: DispatchInterest, { inOrder }: WriteOrdering, jobs: JobQueue) {
  /** What the write order needs to know of firing events written together. */
  const writing = (entries: Entry[]): Writing => ({
    organizations: entries.map(({ check }) => check.organizationId),
    urgent: entries.flatMap(({ check, firing }) => (URGENT_PRIORITIES.has(firing.priority) ? [check.organizationId] : [])),
  })
  /** The `alert.created` events of the entries' new alerts that announce themselves. */
  const announcements = (entries: Entry[], fired: Array<Fired | undefined>): AlertCreated[] =>
    entries.flatMap(({ check, firing, announces }, index) => {
      const alert = fired[index]
      if (!announces || !alert?.created) return []
      return [alertCreated(check.organizationId, alert.id, firing.priority, announces.autoAnalysis)]
    })
  async function announcing(entries: Entry[], write: (trx: Executor) => Promise<Array<Fired | undefined>>) {
    return database.db.transaction().execute(async (trx) => {
      const fired = await write(trx)
      await publishAll(jobs, trx, 'alert.created', announcements(entries, fired))
      return fired
    })
  }
  const commits = createGroupCommit<Entry, Fired | undefined>({
    writeBatch: (batch) =>
      inOrder(writing(batch), () =>
        batch.some((entry) => entry.announces)
          ? announcing(batch, (trx) => fireAlerts(database, enabledConfigs, interest, batch, trx))
          : fireAlerts(database, enabledConfigs, interest, batch),
      ),
    writeOne: (entry) =>
      inOrder(writing([entry]), async () =>
        entry.announces
          ? (await announcing([entry], async (trx) => [await fireAlert(trx, enabledConfigs, interest, entry.check, entry.firing)]))[0]
          : fireAlert(database.db, enabledConfigs, interest, entry.check, entry.firing),
      ),
    maxBatch: MAX_BATCH,
    keyOf: ({ check, firing }) => `${check.organizationId}\u0000${firing.event.fingerprint}`,
  })
  return {
    fire: (check: ConfigCheck, firing: Firing, announces?: Entry['announces']): Promise<Fired | undefined> =>
      commits.write({ check, firing, ...(announces ? { announces } : {}) }),
    /** A delivery's own transaction, in order with the batches (write-order.ts). */
    inOrder,
  }
}
