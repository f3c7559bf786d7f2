import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { createPoller, type JobQueue } from '@svc/jobs'
import { anyUndispatchedChange, claimUndispatchedChanges, markChangesDispatched, UNDISPATCHED_CHANGE_EXISTS } from './queries.js'

const POLL_MS = 1_000
const BATCH = 100

/** One change of an incident, as its timeline row records it (`opened`, `declared`, `status_changed`, …). */
export interface IncidentChange {
  id: string
  organizationId: string
  incidentId: string
  kind: string
  data: Record<string, unknown>
  authorId: string | null
  createdAt: Date
}

/** A module that acts on incident changes (workflows): handles a batch in the transaction that marks it dispatched. */
export interface IncidentChangeSubscriber {
  /** Answers whether it queued work. */
  handle(trx: Executor, changes: IncidentChange[]): Promise<boolean>
  /** After the batch commits, when `handle` queued work. */
  wake(): void
}

export type IncidentChangeBus = ReturnType<typeof createIncidentChangeBus>

/**
 * The incident change bus, as the alert event bus (alerts/event-bus.ts) is for alerts: the
 * changes are the incident timeline's own rows of the kinds in CHANGE_KINDS, written undispatched
 * in the transaction of their change, claimed `for update skip locked` and marked dispatched in
 * the transaction in which every subscriber handled them. The incidents module announces; the
 * workflows module subscribes (decision 0031, "Workflows on incident changes").
 */
export function createIncidentChangeBus({ database, jobs, log }: { database: Database; jobs: JobQueue; log: FastifyBaseLogger }) {
  const subscribers: IncidentChangeSubscriber[] = []

  async function dispatchBatch() {
    return database.db.transaction().execute(async (trx) => {
      const rows = await claimUndispatchedChanges(trx, BATCH)
      const changes = rows.map((row) => ({ ...row, data: row.data as Record<string, unknown> }))
      const worked: IncidentChangeSubscriber[] = []
      for (const subscriber of subscribers) if (await subscriber.handle(trx, changes)) worked.push(subscriber)
      await markChangesDispatched(
        trx,
        rows.map((row) => row.id),
      )
      return { claimed: rows.length, worked }
    })
  }

  const poller = createPoller({
    intervalMs: POLL_MS,
    log,
    what: 'dispatching incident changes',
    watched: { jobs, condition: UNDISPATCHED_CHANGE_EXISTS },
    async round() {
      if (!(await anyUndispatchedChange(database.db))) return { more: false }
      const batch = await dispatchBatch()
      for (const subscriber of batch.worked) subscriber.wake()
      return { more: batch.claimed === BATCH }
    },
  })

  return {
    subscribe(subscriber: IncidentChangeSubscriber): void {
      subscribers.push(subscriber)
    },
    wake: poller.wake,
    start: poller.start,
    stop: poller.stop,
  }
}
