import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { recordDeploy } from './deploys/ingest-route.js'
import { time, type DeployInput } from './deploys/read.js'
import { type IngestConfig } from './queries.js'
import { hashApiKey } from './configs/secrets.js'
import type { createConfigCache } from './config-cache.js'
import { deliveryIdOf } from './delivery-id.js'
import { isObject, text, type JsonObject } from './event.js'
import { readPagerDuty } from './formats/pagerduty.js'
import type { Ingestor } from './ingestor.js'
import { ingestRouteLimit, keyGuesses, type IngestLimits } from './limits.js'
import { SIGNATURE_HEADER, verifySignature } from './signature.js'

/** PagerDuty's own paths, so a sender that lets its user change only the host reaches us unchanged. */
export const PAGERDUTY_ENQUEUE_PATH = '/v2/enqueue'
export const PAGERDUTY_CHANGE_PATH = '/v2/change/enqueue'

const actions = ['trigger', 'acknowledge', 'resolve']
const severities = ['critical', 'error', 'warning', 'info']
const SUMMARY_LIMIT = 1024
const DEDUP_KEY_LIMIT = 255

const Processed = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String({ description: '`Event processed`, or `Change event processed`' }),
    dedup_key: Type.Optional(
      Type.String({ description: 'The alert’s key: the sender’s, or the one generated for a trigger that gave none' }),
    ),
  },
  { title: 'PagerDutyProcessed' },
)
const Refused = Type.Object(
  {
    status: Type.String({ description: '`invalid event`, `throttle event` or `error`' }),
    message: Type.String(),
    errors: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'PagerDutyRefused', description: 'PagerDuty’s refusal shape, not the API’s usual error body' },
)
const Event = Type.Object({}, { additionalProperties: true, description: 'An Events API v2 event; see PagerDuty’s documentation' })

/** A refusal in PagerDuty's words: its clients read `status`, `message` and `errors`. */
class PagerDutyRefusal extends Error {
  readonly statusCode = 400
  constructor(readonly errors: string[]) {
    super('Event object is invalid')
  }
}

function required(value: unknown, field: string, problems: string[], limit?: number): string | undefined {
  const given = text(value)
  if (given === undefined) problems.push(`'${field}' is missing or blank`)
  else if (limit !== undefined && given.length > limit) problems.push(`'${field}' is longer than ${limit} characters`)
  return given
}

/** What PagerDuty would refuse in an alert event, each problem named as PagerDuty names it. */
function alertEventProblems(body: JsonObject): string[] {
  const problems: string[] = []
  const action = text(body.event_action)
  if (!action || !actions.includes(action)) problems.push(`'event_action' must be one of ${actions.join(', ')}`)
  const dedupKey = body.dedup_key
  if (dedupKey !== undefined && dedupKey !== null && (typeof dedupKey !== 'string' || dedupKey.length > DEDUP_KEY_LIMIT))
    problems.push(`'dedup_key' must be a string of at most ${DEDUP_KEY_LIMIT} characters`)
  if (action !== 'trigger') {
    if (action && actions.includes(action) && !text(dedupKey)) problems.push(`'dedup_key' is required to ${action}`)
    return problems
  }
  const payload = isObject(body.payload) ? body.payload : {}
  if (!isObject(body.payload)) problems.push("'payload' is missing or not an object")
  required(payload.summary, 'payload.summary', problems, SUMMARY_LIMIT)
  required(payload.source, 'payload.source', problems)
  const severity = text(payload.severity)
  if (!severity || !severities.includes(severity)) problems.push(`'payload.severity' must be one of ${severities.join(', ')}`)
  if (payload.custom_details !== undefined && !isObject(payload.custom_details) && typeof payload.custom_details !== 'string')
    problems.push("'payload.custom_details' must be an object")
  return problems
}

/** A change event as a deploy: the change's source (or its `custom_details.service`) is the service. */
function changeAsDeploy(body: JsonObject, config: IngestConfig): DeployInput {
  const problems: string[] = []
  const payload = isObject(body.payload) ? body.payload : {}
  const summary = required(payload.summary, 'payload.summary', problems, SUMMARY_LIMIT)
  if (problems.length > 0 || !summary) throw new PagerDutyRefusal(problems)
  const details = isObject(payload.custom_details) ? payload.custom_details : {}
  const firstLink = Array.isArray(body.links) ? body.links.find(isObject) : undefined
  let finishedAt: Date | null
  try {
    finishedAt = time(payload.timestamp, 'payload.timestamp')
  } catch (error) {
    throw new PagerDutyRefusal([`'payload.timestamp' ${(error as Error).message.replace(/^payload\.timestamp /, '')}`])
  }
  return {
    source: 'pagerduty',
    kind: 'deploy',
    service: text(details.service) ?? text(payload.source) ?? config.name,
    environment: text(details.environment) ?? null,
    version: text(details.version) ?? text(details.build_number) ?? summary.slice(0, 200),
    commitSha: text(details.commit) ?? text(details.commit_sha) ?? null,
    repository: text(details.repository) ?? null,
    url: text(firstLink?.href) ?? null,
    status: 'success',
    startedAt: null,
    finishedAt,
  }
}

export interface PagerDutyOptions {
  ingest: Ingestor
  configs: ReturnType<typeof createConfigCache>
  ingestLimits: IngestLimits
}

/**
 * PagerDuty's Events API v2, served as PagerDuty serves it (decision 0024): `routing_key` is the
 * API key of one of our webhook configs of the `pagerduty` format, answers are PagerDuty's
 * shapes and codes (202, 400 `invalid event`, 429 `throttle event`), and change events become
 * deploy events. Limited per config like every ingestion route, the key being the body's.
 */
export const pagerDutyRoutes: FastifyPluginAsyncTypebox<PagerDutyOptions> = async (app, { ingest, configs, ingestLimits }) => {
  const routingKeyOf = (request: FastifyRequest) => text((request.body as JsonObject | undefined)?.routing_key) ?? ''
  const guesses = keyGuesses(ingestLimits)
  const limit = app.rateLimit(
    ingestRouteLimit(ingestLimits, async (apiKeyHash) => (await configs.get(apiKeyHash))?.config, routingKeyOf, guesses),
  )

  /** The config a routing key names, of PagerDuty's format: any other answer is PagerDuty's "invalid routing key". */
  const pagerDutyConfig = (config: IngestConfig) => {
    if (config.format !== 'pagerduty')
      throw new PagerDutyRefusal([`routing key is not for the PagerDuty format: this config takes ${config.format}`])
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const statusCode = error.statusCode ?? 500
    if (error instanceof PagerDutyRefusal)
      return reply.code(400).send({ status: 'invalid event', message: error.message, errors: error.errors })
    if (statusCode === 429)
      return reply
        .code(429)
        .send({ status: 'throttle event', message: 'Requests for this service are arriving too quickly. Please retry later.' })
    if (statusCode === 404)
      return reply.code(400).send({ status: 'invalid event', message: 'Event object is invalid', errors: ['Invalid routing key'] })
    if (statusCode >= 500) {
      request.log.error({ err: error }, 'PagerDuty event failed')
      return reply.code(500).send({ status: 'error', message: 'The event could not be processed: retry later' })
    }
    const message =
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Malformed JSON' : error.message
    return reply.code(statusCode).send({ status: 'invalid event', message: 'Event object is invalid', errors: [message] })
  })

  const routeOptions = (summary: string, description: string) => ({
    // The limiter needs the body's routing key, so it runs once the body is read; an address
    // that has been guessing keys is refused before its body is read.
    config: { public: true, limit: false as const },
    onRequest: guesses.beforeBody,
    preHandler: limit,
    schema: {
      tags: ['webhooks'],
      summary,
      description,
      body: Event,
      response: { 202: Processed, 400: Refused, 429: Refused },
    },
  })

  const arrivalOf = (request: FastifyRequest, routingKey: string) => ({
    apiKeyHash: hashApiKey(routingKey),
    proof: { signature: request.headers[SIGNATURE_HEADER] },
    rawBody: request.rawBody ?? Buffer.alloc(0),
    deliveryId: deliveryIdOf(request),
  })

  app.post(
    PAGERDUTY_ENQUEUE_PATH,
    routeOptions(
      'PagerDuty Events API v2: trigger, acknowledge or resolve an alert (public, authenticated by routing_key)',
      '`routing_key` is the API key of a webhook config of the `pagerduty` format. A trigger without `dedup_key` gets one, answered so the sender can resolve later. Answers and errors are PagerDuty’s (`202 {"status":"success","message":"Event processed","dedup_key"}`, `400 {"status":"invalid event","errors"}`, `429`). A config with a signing secret still needs `x-webhook-signature`.',
    ),
    async (request, reply) => {
      const body = request.body as JsonObject
      const routingKey = text(body.routing_key)
      const problems = alertEventProblems(body)
      if (!routingKey) problems.unshift("'routing_key' is missing or blank")
      if (problems.length > 0) throw new PagerDutyRefusal(problems)
      const dedupKey = text(body.dedup_key) ?? randomUUID()
      await ingest(arrivalOf(request, routingKey as string), (config) => {
        pagerDutyConfig(config)
        return readPagerDuty({ ...body, dedup_key: dedupKey })
      })
      return reply.code(202).send({ status: 'success' as const, message: 'Event processed', dedup_key: dedupKey })
    },
  )

  app.post(
    PAGERDUTY_CHANGE_PATH,
    routeOptions(
      'PagerDuty Events API v2: a change event, recorded as a deploy (public, authenticated by routing_key)',
      'The change’s `payload.summary` is required; `custom_details.service` (else `payload.source`, else the config’s name) is the service, `custom_details.environment`, `version` and `commit` are read when present, the first link is the URL, `payload.timestamp` when it happened.',
    ),
    async (request, reply) => {
      const body = request.body as JsonObject
      const routingKey = text(body.routing_key)
      if (!routingKey) throw new PagerDutyRefusal(["'routing_key' is missing or blank"])
      // Read afresh: a deploy is written without the guard fired alerts have against a stale config.
      const found = await configs.reload(hashApiKey(routingKey))
      if (!found) throw new PagerDutyRefusal(['Invalid routing key'])
      pagerDutyConfig(found.config)
      verifySignature(request.headers[SIGNATURE_HEADER], found.config.signingSecret, request.rawBody ?? Buffer.alloc(0))
      const deploy = changeAsDeploy(body, found.config)
      await recordDeploy(app, found.config.organizationId, found.config.id, deploy, deliveryIdOf(request))
      return reply.code(202).send({ status: 'success' as const, message: 'Change event processed' })
    },
  )
}
