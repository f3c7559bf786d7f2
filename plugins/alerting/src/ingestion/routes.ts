import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { BadRequestError, NotFoundError, PlanRequiredError } from '@svc/http'
import { registerDeployIngestRoute } from '../deploys/ingest-route.js'
import { INGEST_GRACE_DAYS, createIngestPlanCheck } from './plan-check.js'
import { createConfigCache } from './config-cache.js'
import { IngestResult, ingestDelivery } from './delivery.js'
import { deliveryIdOf } from './delivery-id.js'
import { createFireBatcher } from './fire-batcher.js'
import { ingestRouteLimit, type IngestLimits } from './limits.js'
import { INGEST_PATH } from '../webhooks/routes.js'
import type { WebhookFormat } from '../webhooks/schemas.js'
import { hashApiKey } from '../webhooks/secrets.js'
import { readEvents } from './formats/index.js'
import { SIGNATURE_HEADER, verifySignature } from './signature.js'

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
  /** Called when a delivery created alerts: their escalations start now rather than at the next poll. */
  alertsCreated: () => void
  /** Billing is on: ingestion needs the organization's alerting plan, or its 7 days of grace. */
  enforcePlans?: boolean
}

export const ingestionRoutes: FastifyPluginAsyncTypebox<IngestionOptions> = async (app, { ingestLimits, alertsCreated, enforcePlans }) => {
  const db = app.database.db
  const planHolds = createIngestPlanCheck(db, enforcePlans ?? false)
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
      if (!(await planHolds(found.config.organizationId)))
        throw new PlanRequiredError(
          `the organization's alerting plan lapsed more than ${INGEST_GRACE_DAYS} days ago: ingestion is paused until a plan is active`,
        )
      const events = readEvents(found.config.format as WebhookFormat, request.body)
      if (events.length > 100) throw new BadRequestError('a delivery carries at most 100 events')
      const deliveryId = deliveryIdOf(request)

      const deps = { database: app.database, batcher, jobs: app.jobs }
      let results = await ingestDelivery(deps, found.config, events, deliveryId)
      if (!results && !found.fresh) {
        // The cached config changed under the delivery: look again, and judge it by what is there now.
        found = await configs.reload(apiKeyHash)
        if (!found) throw new NotFoundError('webhook')
        verifySignature(signature, found.config.signingSecret, rawBody)
        results = await ingestDelivery(deps, found.config, events, deliveryId)
      }
      if (!results) throw new NotFoundError('webhook')
      if (results.some((result) => result.status === 'created')) alertsCreated()
      const [first] = results
      return reply.code(202).send({ alertId: first?.alertId ?? null, status: first?.status ?? 'ignored', results })
    },
  )
}
