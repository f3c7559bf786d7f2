import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import type { Database, Executor } from '@svc/db'
import { alertGetsAnalysis, publish } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { ingestedEvents } from '@svc/metrics'
import {
  type ConfigCheck,
  type DispatchInterest,
  fireAlert,
  type Fired,
  type Firing,
  moveAlertFromSource,
  URGENT_PRIORITIES,
} from '../alerts/index.js'
import { claimDelivery, type IngestConfig, saveDeliveryResult } from './queries.js'
import { ackTimeoutFromNow } from '../oncall/index.js'
import { enabledConfigs } from './configs/queries.js'
import type { Priority } from './configs/schemas.js'
import type { IngestedEvent } from './event.js'
import { alertCreated, type FireBatcher } from './fire-batcher.js'

const outcomes = ['created', 'deduplicated', 'acknowledged', 'resolved', 'ignored'] as const

/** What one event of a delivery did; stored per retry key, answered again to a retry. */
export const IngestResult = Type.Object({
  alertId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  status: Type.Enum(outcomes),
})
export type Outcome = Static<typeof IngestResult>

/** What makes a retry of this event recognisable: the delivery id, else its fingerprint and time. */
function retryKey(deliveryId: string | undefined, event: IngestedEvent, index: number): string | undefined {
  if (deliveryId) return `${deliveryId}#${index}`
  return event.occurredAt ? `${event.action}:${event.fingerprint}@${event.occurredAt}` : undefined
}

const priorityOf = (config: IngestConfig, event: IngestedEvent): Priority => event.priority ?? (config.defaultPriority as Priority)

/** A new alert from this event is announced (`alert.created`), for the insights surface to analyze. */
function announcesAlert(config: IngestConfig, event: IngestedEvent): boolean {
  return event.action === 'fire' && alertGetsAnalysis({ priority: priorityOf(config, event), autoAnalysis: config.autoAnalysis })
}

/** Whether writes left work for the escalator or the event dispatcher (as `Fired` says of one event). */
type LeftWork = Pick<Fired, 'escalates' | 'dispatches'>
const NO_WORK: LeftWork = { escalates: false, dispatches: false }

/** An event's outcome, and the work it left. */
type Applied = LeftWork & { outcome: Outcome }

/** What a delivery did: each event's outcome, and whether any left work for the escalator or the event dispatcher. */
export type Delivered = LeftWork & { outcomes: Outcome[] }

/** Where an event's writes go: the database or a transaction; optionally a batcher for firing events, or the queue to announce them on. */
interface Writes {
  db: Executor
  interest: DispatchInterest
  fire?: FireBatcher['fire']
  announce?: JobQueue
}

/**
 * The event's change, or undefined when the config changed since it was read (see ingest-writes.ts).
 * Given `announce` (with a transaction), a created alert publishes `alert.created` in it.
 */
async function applyEvent(
  { db, interest, fire, announce }: Writes,
  config: IngestConfig,
  event: IngestedEvent,
): Promise<Applied | undefined> {
  const check: ConfigCheck = {
    configId: config.id,
    organizationId: config.organizationId,
    apiKeyHash: config.apiKeyHash,
    signingSecret: config.signingSecret,
  }
  if (event.action === 'fire') {
    const priority = priorityOf(config, event)
    const firing: Firing = { source: config.format, priority, groupWindowSeconds: config.groupWindowSeconds, event }
    const alert = await (fire ? fire(check, firing) : fireAlert(db, enabledConfigs, interest, check, firing))
    if (alert?.created && announce && announcesAlert(config, event)) {
      await publish(announce, db, 'alert.created', alertCreated(config.organizationId, alert.id, priority, config.autoAnalysis))
    }
    return (
      alert && {
        outcome: { alertId: alert.id, status: alert.created ? 'created' : 'deduplicated' },
        escalates: alert.escalates,
        dispatches: alert.dispatches,
      }
    )
  }
  const to = event.action === 'resolve' ? 'resolved' : 'acknowledged'
  const moved = await moveAlertFromSource(db, enabledConfigs, check, {
    fingerprint: event.fingerprint,
    to,
    ackTimeout: ackTimeoutFromNow,
    source: config.format,
  })
  if (!moved) return undefined
  // The move updates the escalation itself; its timeline event is dispatched at the dispatcher's next poll.
  const outcome: Outcome = moved.id ? { alertId: moved.id, status: to } : { alertId: null, status: 'ignored' }
  return { outcome, ...NO_WORK }
}

/** Thrown inside a delivery's transaction when its config changed meanwhile: rolls it back. */
class ConfigChanged extends Error {}

export interface DeliveryDeps {
  database: Database
  interest: DispatchInterest
  batcher: FireBatcher
  jobs: JobQueue
}

/**
 * Applies the events of one verified delivery under `config`: each event's outcome and the work
 * left for the background workers, or undefined when the config changed under the delivery
 * (nothing of it is kept; the caller reads the config again). An event seen before (by its retry
 * key) answers its stored outcome and changes nothing; announcements and retry records commit
 * with the alerts they describe.
 */
export async function ingestDelivery(
  { database, interest, batcher, jobs }: DeliveryDeps,
  config: IngestConfig,
  events: IngestedEvent[],
  deliveryId: string | undefined,
): Promise<Delivered | undefined> {
  const [only] = events
  // One event with no retry key: no transaction of its own, and a firing event is written in one
  // statement with those of concurrent deliveries (the common case), its announcement with it.
  if (events.length === 1 && only && retryKey(deliveryId, only, 0) === undefined) {
    const announces = announcesAlert(config, only) ? { autoAnalysis: config.autoAnalysis } : undefined
    const fire: FireBatcher['fire'] = (check, firing) => batcher.fire(check, firing, announces)
    const applied = await applyEvent({ db: database.db, interest, fire }, config, only)
    if (!applied) return undefined
    ingestedEvents.inc({ source: config.format, outcome: applied.outcome.status })
    return { outcomes: [applied.outcome], escalates: applied.escalates, dispatches: applied.dispatches }
  }
  const urgent = events.some((event) => event.action === 'fire' && URGENT_PRIORITIES.has(priorityOf(config, event)))
  const writing = { organizations: [config.organizationId], urgent: urgent ? [config.organizationId] : [] }
  try {
    const results = await batcher.inOrder(writing, () =>
      database.db.transaction().execute(async (trx) => {
        const results: Array<Applied & { repeated: boolean }> = []
        for (const [index, event] of events.entries()) {
          const key = retryKey(deliveryId, event, index)
          const earlier = key ? await claimDelivery(trx, config.id, config.organizationId, key) : undefined
          if (earlier !== undefined) {
            results.push({ outcome: Value.Parse(IngestResult, earlier), ...NO_WORK, repeated: true })
            continue
          }
          const applied = await applyEvent({ db: trx, interest, announce: jobs }, config, event)
          if (!applied) throw new ConfigChanged()
          if (key) await saveDeliveryResult(trx, config.id, key, applied.outcome)
          results.push({ ...applied, repeated: false })
        }
        return results
      }),
    )
    for (const { outcome, repeated } of results)
      ingestedEvents.inc({ source: config.format, outcome: repeated ? 'retried' : outcome.status })
    return {
      outcomes: results.map(({ outcome }) => outcome),
      escalates: results.some((result) => result.escalates),
      dispatches: results.some((result) => result.dispatches),
    }
  } catch (error) {
    if (error instanceof ConfigChanged) return undefined
    throw error
  }
}
