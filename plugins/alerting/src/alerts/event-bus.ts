import type { FastifyBaseLogger } from 'fastify'
import { sql, type RawBuilder } from 'kysely'
import type { Database, Executor, Json } from '@svc/db'
import { createPoller, type JobQueue } from '@svc/jobs'
import { dispatchWaits } from '@svc/metrics'
import { escalationsCorrelated } from './escalation-state.js'
import {
  anyUndispatchedEvent,
  type BUS_EVENT_TYPES,
  claimUndispatchedEvents,
  markDispatched,
  UNDISPATCHED_EVENT_EXISTS,
} from './queries.js'

const POLL_MS = 1_000
const BATCH = 100

export type BusEventType = (typeof BUS_EVENT_TYPES)[number]

/** An alert's `created`, `acknowledged` or `resolved` timeline row, as the bus hands it on. */
export interface BusEvent {
  id: string
  organizationId: string
  alertId: string
  type: BusEventType
  /** How, or from where (`{via: 'link'}`, `{source}`, `{incidentId}` when its incident moved it). */
  data: Json
  actorUserId: string | null
  createdAt: Date
}

/**
 * A module that acts on alert events: incidents put new alerts in their incident, workflows
 * queue their runs, outbound webhooks their deliveries. Each says itself which events concern it.
 */
export interface AlertEventSubscriber {
  /**
   * Whether it may act on a new alert's `created` event, as a SQL condition over the alert's
   * organization and priority, and, where one statement fires several alerts, `firedWith`: those
   * alerts, a relation of `(organization_id, priority)`. The statement that fires an alert writes
   * that event as already dispatched when no subscriber may act on it, so the ingestion hot path
   * leaves the bus nothing to claim (alerts/fire.ts).
   */
  wantsCreated(organization: RawBuilder<unknown>, priority: RawBuilder<unknown>, firedWith?: RawBuilder<unknown>): RawBuilder<unknown>
  /** The batch's events, in the transaction that marks them dispatched; answers whether it queued work. */
  handle(trx: Executor, events: BusEvent[]): Promise<boolean>
  /** After the batch commits, when `handle` queued work: its worker may start at once. */
  wake(): void
}

/** Whether a new alert's `created` event is for the bus: a `dispatched_at` value for its timeline row. */
export type DispatchInterest = (
  organization: RawBuilder<unknown>,
  priority: RawBuilder<unknown>,
  firedWith?: RawBuilder<unknown>,
) => RawBuilder<unknown>

/**
 * The `dispatched_at` of a new alert's `created` row: null (for the bus) when a subscriber may act
 * on it, now otherwise. One expression, inside the statement that fires the alert.
 */
export function dispatchInterest(subscribers: ReadonlyArray<Pick<AlertEventSubscriber, 'wantsCreated'>>): DispatchInterest {
  return (organization, priority, firedWith) => {
    if (subscribers.length === 0) return sql`now()`
    const wanted = subscribers.map((subscriber) => sql`(${subscriber.wantsCreated(organization, priority, firedWith)})`)
    return sql`case when ${sql.join(wanted, sql` or `)} then null else now() end`
  }
}

export type AlertEventBus = ReturnType<typeof createAlertEventBus>

export interface AlertEventBusDeps {
  database: Database
  /** Its census looks for undispatched events (decision 0033, "Tables"). */
  jobs: JobQueue
  log: FastifyBaseLogger
  /**
   * Writes of alerts under way that the next claim must see once they commit (intake's urgent
   * firing writes): settles when they have, undefined when there are none.
   */
  writesUnderWay?: () => Promise<void> | undefined
}

/**
 * The alert event bus. The events are the alert timeline's own rows, written in the statement or
 * transaction of their change, so nothing is lost between a change and what follows from it;
 * they are claimed `for update skip locked` (replicas share the work) and marked dispatched in
 * the transaction in which every subscriber handled them, so none acts on an event twice.
 * Subscribers register while the plugin registers, before the first alert is fired.
 */
export function createAlertEventBus({ database, jobs, log, writesUnderWay }: AlertEventBusDeps) {
  const subscribers: AlertEventSubscriber[] = []
  /** When a round last ended without failing: whether a new alert's event will be dispatched, however far behind. */
  let progressedAt = Date.now()

  async function dispatchBatch(): Promise<{ claimed: number; worked: AlertEventSubscriber[] }> {
    // A root alert whose write is under way must be correlated with, not after, the symptoms
    // committed meanwhile: the claim waits for it (one commit at most). Before the transaction
    // begins, not in it: on PGlite's one connection the write could not commit while it is open.
    const underWay = writesUnderWay?.()
    if (underWay) {
      dispatchWaits.inc()
      await underWay
    }
    return database.db.transaction().execute(async (trx) => {
      const events: BusEvent[] = await claimUndispatchedEvents(trx, BATCH)
      const worked: AlertEventSubscriber[] = []
      for (const subscriber of subscribers) if (await subscriber.handle(trx, events)) worked.push(subscriber)
      await markDispatched(
        trx,
        events.map((event) => event.id),
      )
      // Their alerts are correlated when this commits: their escalations may start.
      await escalationsCorrelated(
        trx,
        events.flatMap((event) => (event.type === 'created' ? [event.alertId] : [])),
      )
      return { claimed: events.length, worked }
    })
  }

  const poller = createPoller({
    intervalMs: POLL_MS,
    log,
    what: 'dispatching alert events',
    // A look that finds nothing undispatched is progress too: a resting dispatcher is not a stalled one.
    watched: { jobs, condition: UNDISPATCHED_EVENT_EXISTS, none: () => (progressedAt = Date.now()) },
    async round() {
      // Most rounds are the interval's, and most find nothing: a cheap look before the claiming transaction.
      if (!(await anyUndispatchedEvent(database.db))) {
        progressedAt = Date.now()
        return { more: false }
      }
      const batch = await dispatchBatch()
      progressedAt = Date.now()
      for (const subscriber of batch.worked) subscriber.wake()
      return { more: batch.claimed === BATCH }
    },
  })

  return {
    subscribe(subscriber: AlertEventSubscriber): void {
      subscribers.push(subscriber)
    },
    interest: dispatchInterest(subscribers),
    /** Whether the dispatcher finished a round (dispatched a batch, or found nothing) in the last `ms`. */
    progressedWithin: (ms: number) => Date.now() - progressedAt <= ms,
    wake: poller.wake,
    start: poller.start,
    stop: poller.stop,
  }
}
