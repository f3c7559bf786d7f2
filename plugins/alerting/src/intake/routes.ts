import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { BadRequestError, UnauthorizedError } from '@svc/http'
import { registerDeployIngestRoute } from './deploys/ingest-route.js'
import { createIngestPlanCheck } from './plan-check.js'
import { createConfigCache } from './config-cache.js'
import { IngestResult } from './delivery.js'
import { deliveryIdOf } from './delivery-id.js'
import { createFireBatcher } from './fire-batcher.js'
import type { WriteOrdering } from './write-order.js'
import { type DispatchInterest } from '../alerts/index.js'
import { ingestRouteLimit, type IngestLimits } from './limits.js'
import { INGEST_PATH } from './configs/routes.js'
import type { WebhookFormat } from './configs/schemas.js'
import { hashApiKey } from './configs/secrets.js'
import { readEvents } from './formats/index.js'
import { credentialsOf } from './credentials.js'
import { createIngestor, type IngestionWakes } from './ingestor.js'
import { pagerDutyRoutes } from './pagerduty-routes.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of an ingested body: signatures are computed over them. */
    rawBody: Buffer | null
  }
}

const Accepted = Type.Object(
  {
    ...IngestResult.properties,
    results: Type.Array(IngestResult, { description: 'One per event of the delivery (an Alertmanager delivery carries several)' }),
  },
  { title: 'IngestAccepted', description: 'The first event’s outcome, and every event’s' },
)

/**
 * Ingestion (spec: "Inbound ingestion events"): public, authenticated by the API key in the path.
 * Unknown, disabled and rotated keys are the same 404; the key is redacted from logs. The body
 * is checked against `x-webhook-signature` over its exact bytes before anything is read or stored.
 */
export interface IngestionOptions {
  ingestLimits: IngestLimits
  /** Whether a new alert's `created` event is for the alert event bus (its subscribers registered). */
  interest: DispatchInterest
  /** The workers a delivery's writes may leave work for. */
  wake: IngestionWakes
  /** Billing is on: ingestion needs the organization's alerting plan, or its 7 days of grace. */
  enforcePlans?: boolean
  /** The order of firing writes, shared with the event dispatcher (write-order.ts). */
  writeOrder: WriteOrdering
}

export const ingestionRoutes: FastifyPluginAsyncTypebox<IngestionOptions> = async (
  app,
  { ingestLimits, interest, wake, enforcePlans, writeOrder },
) => {
  const db = app.database.db
  const planHolds = createIngestPlanCheck(db, enforcePlans ?? false)
  const configs = createConfigCache(db)
  const batcher = createFireBatcher(app.database, interest, writeOrder, app.jobs)
  const ingest = createIngestor({ database: app.database, interest, jobs: app.jobs, batcher, configs, planHolds, wake })
  app.decorateRequest('rawBody', null)
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer
    parseJson(request, (body as Buffer).toString('utf8'), done)
  })

  registerDeployIngestRoute(app)
  await app.register(pagerDutyRoutes, { ingest, configs, ingestLimits })

  const limit = ingestRouteLimit(
    ingestLimits,
    async (apiKeyHash) => (await configs.get(apiKeyHash))?.config,
    (request) => credentialsOf(request).apiKey ?? '',
  )
  const Body = Type.Object(
    {},
    { additionalProperties: true, description: 'An event in the config’s format (generic, alertmanager, grafana, pagerduty, datadog)' },
  )
  const proofs =
    'Proof of the secret, required when the config has one: `x-webhook-signature` (`sha256=<hex HMAC-SHA256(secret, body)>` or `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, 300 s tolerance), Grafana’s `X-Grafana-Alerting-Signature` (bare hex, of `<timestamp>:<body>` with `X-Grafana-Alerting-Timestamp`), or the secret itself as the credential. Retries are recognised by `x-delivery-id`, `webhook-id` or `x-github-delivery`, else by fingerprint and timestamp. Limited per webhook config (its `rateLimitPerMinute`, else INGEST_RATE_LIMIT_MAX a minute): 429 with `Retry-After` past it.'

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { apiKey, proof } = credentialsOf(request)
    if (!apiKey) throw new UnauthorizedError('send the API key: in the path, as the Basic user name, or as Authorization: Bearer')
    const arrival = {
      apiKeyHash: hashApiKey(apiKey),
      proof,
      rawBody: request.rawBody ?? Buffer.alloc(0),
      deliveryId: deliveryIdOf(request),
    }
    const { results } = await ingest(arrival, (config) => {
      const events = readEvents(config.format as WebhookFormat, request.body)
      if (events.length > 100) throw new BadRequestError('a delivery carries at most 100 events')
      return events
    })
    const [first] = results
    return reply.code(202).send({ alertId: first?.alertId ?? null, status: first?.status ?? 'ignored', results })
  }

  app.post(
    `${INGEST_PATH}/:apiKey`,
    {
      config: { public: true, limit },
      schema: {
        tags: ['webhooks'],
        summary: 'Ingest an event (public, authenticated by the API key in the path)',
        description: `${proofs} Here an \`Authorization\` credential (Bearer, or the Basic password) is the secret.`,
        params: Type.Object({ apiKey: Type.String({ description: 'The config’s API key (whk_…)' }) }),
        body: Body,
        response: { 202: Accepted },
      },
    },
    handler,
  )

  app.post(
    INGEST_PATH,
    {
      config: { public: true, limit },
      schema: {
        tags: ['webhooks'],
        summary: 'Ingest an event (public, authenticated by the API key in the Authorization header)',
        description: `The API key is the Basic user name (the password being the secret, when the config has one) or the Bearer token, so it need not be in a URL. ${proofs}`,
        body: Body,
        response: { 202: Accepted },
      },
    },
    handler,
  )
}
