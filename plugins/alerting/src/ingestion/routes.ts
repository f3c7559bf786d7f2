import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Executor, Json } from '@svc/db'
import { publish } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { BadRequestError, NotFoundError } from '@svc/http'
import { registerDeployIngestRoute } from '../deploys/ingest-route.js'
import { claimDelivery, saveDeliveryResult, type IngestConfig } from '../queries/alerts.js'
import { fireAlert, moveAlertFromSource, type ConfigCheck, type Firing } from '../queries/ingest-writes.js'
import { createConfigCache } from './config-cache.js'
import { deliveryIdOf } from './delivery-id.js'
import { createFireBatcher } from './fire-batcher.js'
import { ingestRouteLimit, type IngestLimits } from './limits.js'
import { INGEST_PATH } from '../webhooks/routes.js'
import { type Priority, type WebhookFormat } from '../webhooks/schemas.js'
import { hashApiKey } from '../webhooks/secrets.js'
import { readEvents } from './formats/index.js'
import type { IngestedEvent } from './event.js'
import { SIGNATURE_HEADER, verifySignature } from './signature.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of an ingested body: signatures are computed over them. */
    rawBody: Buffer | null
  }
}

const outcomes = ['created', 'deduplicated', 'acknowledged', 'resolved', 'ignored'] as const
type Outcome = { alertId: string | null; status: (typeof outcomes)[number] }

const IngestResult = Type.Object({ alertId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]), status: Type.Enum(outcomes) })
const Accepted = Type.Object(
  {
    ...IngestResult.properties,
    results: Type.Array(IngestResult, { description: 'One per event of the delivery (an Alertmanager delivery carries several)' }),
  },
  { title: 'IngestAccepted', description: 'The first event’s outcome, and every event’s' },
)

/** What makes a retry of this event recognisable: the delivery id, else its fingerprint and time. */
function retryKey(deliveryId: string | undefined, event: IngestedEvent, index: number): string | undefined {
  if (deliveryId) return `${deliveryId}#${index}`
  return event.occurredAt ? `${event.action}:${event.fingerprint}@${event.occurredAt}` : undefined
}

/** Priorities whose new alerts get an analysis (they open command rooms). */
const ANALYZED_PRIORITIES = new Set<Priority>(['P1', 'P2'])

const priorityOf = (config: IngestConfig, event: IngestedEvent): Priority => event.priority ?? (config.defaultPriority as Priority)

/** A new alert from this event is announced (`alert.created`), for the insights surface to analyze. */
function announcesAlert(config: IngestConfig, event: IngestedEvent): boolean {
  return event.action === 'fire' && (config.autoAnalysis || ANALYZED_PRIORITIES.has(priorityOf(config, event)))
}

/** Where an event's writes go: the database or a transaction; optionally a batcher for firing events, or the queue to announce them on. */
interface Writes {
  db: Executor
  fire?: (check: ConfigCheck, firing: Firing) => Promise<{ id: string; created: boolean } | undefined>
  announce?: JobQueue
}

/**
 * The event's change, or undefined when the config changed since it was read (see ingest-writes.ts).
 * Given `announce` (with a transaction), a created alert publishes `alert.created` in it.
 */
async function applyEvent({ db, fire, announce }: Writes, config: IngestConfig, event: IngestedEvent): Promise<Outcome | undefined> {
  const check: ConfigCheck = {
    configId: config.id,
    organizationId: config.organizationId,
    apiKeyHash: config.apiKeyHash,
    signingSecret: config.signingSecret,
  }
  if (event.action === 'fire') {
    const priority = priorityOf(config, event)
    const firing = { source: config.format, priority, groupWindowSeconds: config.groupWindowSeconds, event }
    const alert = await (fire ? fire(check, firing) : fireAlert(db, check, firing))
    if (alert?.created && announce && announcesAlert(config, event)) {
      await publish(announce, db, 'alert.created', {
        organizationId: config.organizationId,
        alertId: alert.id,
        priority,
        autoAnalysis: config.autoAnalysis,
      })
    }
    return alert && { alertId: alert.id, status: alert.created ? 'created' : 'deduplicated' }
  }
  const to = event.action === 'resolve' ? 'resolved' : 'acknowledged'
  const from: Array<'open' | 'acknowledged'> = event.action === 'resolve' ? ['open', 'acknowledged'] : ['open']
  const moved = await moveAlertFromSource(db, check, { fingerprint: event.fingerprint, from, to, source: config.format })
  return moved && (moved.id ? { alertId: moved.id, status: to } : { alertId: null, status: 'ignored' })
}

/** Thrown inside a delivery's transaction when its config changed meanwhile: rolls it back. */
class ConfigChanged extends Error {}

/**
 * Ingestion (spec: "Inbound ingestion events"): public, authenticated by the API key in the path.
 * Unknown, disabled and rotated keys are the same 404; the key is redacted from logs. The body
 * is checked against `x-webhook-signature` over its exact bytes before anything is read or stored.
 */
export const ingestionRoutes: FastifyPluginAsyncTypebox<{ ingestLimits: IngestLimits }> = async (app, { ingestLimits }) => {
  const db = app.database.db
  const configs = createConfigCache(db)
  const batcher = createFireBatcher(app.database)
  app.decorateRequest('rawBody', null)
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer
    parseJson(request, (body as Buffer).toString('utf8'), done)
  })

  registerDeployIngestRoute(app)

  app.post(
    `${INGEST_PATH}/:apiKey`,
    {
      config: { public: true, limit: ingestRouteLimit(ingestLimits, async (apiKeyHash) => (await configs.get(apiKeyHash))?.config) },
      schema: {
        tags: ['webhooks'],
        summary: 'Ingest an event (public, authenticated by the API key in the path)',
        description:
          'Optional `x-webhook-signature`: `sha256=<hex HMAC-SHA256(secret, body)>` or `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (300 s tolerance); required when the config has a signing secret. Retries are recognised by `x-delivery-id`, `webhook-id` or `x-github-delivery`, else by fingerprint and timestamp. Limited per webhook config (its `rateLimitPerMinute`, else INGEST_RATE_LIMIT_MAX a minute): 429 with `Retry-After` past it.',
        params: Type.Object({ apiKey: Type.String({ description: 'The config’s API key (whk_…)' }) }),
        body: Type.Object(
          {},
          {
            additionalProperties: true,
            description: 'An event in the config’s format (generic, alertmanager, grafana, pagerduty, datadog)',
          },
        ),
        response: { 202: Accepted },
      },
    },
    async (request, reply) => {
      const apiKeyHash = hashApiKey(request.params.apiKey)
      const rawBody = request.rawBody ?? Buffer.alloc(0)
      const signature = request.headers[SIGNATURE_HEADER]
      let found = await configs.get(apiKeyHash)
      if (!found) throw new NotFoundError('webhook')
      try {
        verifySignature(signature, found.config.signingSecret, rawBody)
      } catch (error) {
        // The secret may have been rotated since the config was cached: judge by the current one.
        if (found.fresh) throw error
        found = await configs.reload(apiKeyHash)
        if (!found) throw new NotFoundError('webhook')
        verifySignature(signature, found.config.signingSecret, rawBody)
      }
      const events = readEvents(found.config.format as WebhookFormat, request.body)
      if (events.length > 100) throw new BadRequestError('a delivery carries at most 100 events')
      const deliveryId = deliveryIdOf(request)

      const process = async (config: IngestConfig): Promise<Outcome[] | undefined> => {
        const [only] = events
        // One event with no retry key and nothing to announce: no transaction, and a firing event is
        // written in one statement with those of concurrent deliveries (the common case).
        if (events.length === 1 && only && retryKey(deliveryId, only, 0) === undefined && !announcesAlert(config, only)) {
          const outcome = await applyEvent({ db, fire: batcher.fire }, config, only)
          return outcome && [outcome]
        }
        try {
          return await db.transaction().execute(async (trx) => {
            const outcomes: Outcome[] = []
            for (const [index, event] of events.entries()) {
              const key = retryKey(deliveryId, event, index)
              const earlier = key ? await claimDelivery(trx, config.id, config.organizationId, key) : undefined
              if (earlier) {
                outcomes.push(earlier as unknown as Outcome)
                continue
              }
              const outcome = await applyEvent({ db: trx, announce: app.jobs }, config, event)
              if (!outcome) throw new ConfigChanged()
              if (key) await saveDeliveryResult(trx, config.id, key, outcome as unknown as Json)
              outcomes.push(outcome)
            }
            return outcomes
          })
        } catch (error) {
          if (error instanceof ConfigChanged) return undefined
          throw error
        }
      }

      let results = await process(found.config)
      if (!results && !found.fresh) {
        // The cached config changed under the delivery: look again, and judge it by what is there now.
        found = await configs.reload(apiKeyHash)
        if (!found) throw new NotFoundError('webhook')
        verifySignature(signature, found.config.signingSecret, rawBody)
        results = await process(found.config)
      }
      if (!results) throw new NotFoundError('webhook')
      const [first] = results
      return reply.code(202).send({ alertId: first?.alertId ?? null, status: first?.status ?? 'ignored', results })
    },
  )
}
