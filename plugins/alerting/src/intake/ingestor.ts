import type { Database } from '@svc/db'
import { NotFoundError, PlanRequiredError } from '@svc/http'
import type { JobQueue } from '@svc/jobs'
import { type DispatchInterest } from '../alerts/index.js'
import { type IngestConfig } from './queries.js'
import type { createConfigCache } from './config-cache.js'
import { ingestDelivery, type Outcome } from './delivery.js'
import type { IngestedEvent } from './event.js'
import type { FireBatcher } from './fire-batcher.js'
import { INGEST_GRACE_DAYS } from './plan-check.js'
import { verifyDelivery, type DeliveryProof } from './signature.js'

export interface IngestorDeps {
  database: Database
  /** Whether a new alert's `created` event is for the alert event bus. */
  interest: DispatchInterest
  jobs: JobQueue
  batcher: FireBatcher
  configs: ReturnType<typeof createConfigCache>
  planHolds: (organizationId: string) => Promise<boolean>
  wake: IngestionWakes
}

/**
 * The background workers a delivery may leave work for, woken once its writes commit so they
 * start now rather than at their next poll; a delivery that left nothing wakes nobody.
 */
export interface IngestionWakes {
  /** A new alert has a pending escalation. */
  escalator(): void
  /** A timeline event waits for dispatch (correlation, outbound webhooks, workflows). */
  dispatcher(): void
}

/** One delivery as it arrived: the key that names its config, its proof of the secret and exact bytes. */
export interface Arrival {
  apiKeyHash: string
  proof: DeliveryProof
  rawBody: Buffer
  deliveryId: string | undefined
}

/**
 * Takes a delivery from any ingestion route (ours, PagerDuty's): finds the enabled config of the
 * key, checks the delivery's proof against the config's secret (signature or credential), holds the organization to its plan, reads
 * the events in the config's terms (`read`, which may refuse), and applies them. A cached config
 * that no longer matches (a rotated secret or key, a disabled config) is looked up again and the
 * delivery judged by what is there now. Unknown keys are a 404.
 */
export function createIngestor(deps: IngestorDeps) {
  const { configs, planHolds } = deps
  const writes = { database: deps.database, interest: deps.interest, batcher: deps.batcher, jobs: deps.jobs }

  async function reloaded(arrival: Arrival) {
    const found = await configs.reload(arrival.apiKeyHash)
    if (!found) throw new NotFoundError('webhook')
    verifyDelivery(arrival.proof, found.config.signingSecret, arrival.rawBody)
    return found
  }

  return async function ingest(
    arrival: Arrival,
    read: (config: IngestConfig) => IngestedEvent[],
  ): Promise<{ config: IngestConfig; results: Outcome[] }> {
    let found = await configs.get(arrival.apiKeyHash)
    if (!found) throw new NotFoundError('webhook')
    try {
      verifyDelivery(arrival.proof, found.config.signingSecret, arrival.rawBody)
    } catch (error) {
      // The secret may have been rotated since the config was cached: judge by the current one.
      if (found.fresh) throw error
      found = await reloaded(arrival)
    }
    if (!(await planHolds(found.config.organizationId)))
      throw new PlanRequiredError(
        `the organization's alerting plan lapsed more than ${INGEST_GRACE_DAYS} days ago: ingestion is paused until a plan is active`,
      )
    const events = read(found.config)
    let delivered = await ingestDelivery(writes, found.config, events, arrival.deliveryId)
    if (!delivered && !found.fresh) {
      // The cached config changed under the delivery: look again, and judge it by what is there now.
      found = await reloaded(arrival)
      delivered = await ingestDelivery(writes, found.config, read(found.config), arrival.deliveryId)
    }
    if (!delivered) throw new NotFoundError('webhook')
    if (delivered.escalates) deps.wake.escalator()
    if (delivered.dispatches) deps.wake.dispatcher()
    return { config: found.config, results: delivered.outcomes }
  }
}

export type Ingestor = ReturnType<typeof createIngestor>
