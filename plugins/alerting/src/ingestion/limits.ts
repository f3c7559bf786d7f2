import type { FastifyRequest } from 'fastify'
import type { RouteLimit } from '@svc/http'
import type { IngestConfig } from '../queries/alerts.js'
import { hashApiKey } from '../webhooks/secrets.js'

export interface IngestLimits {
  /** Deliveries per minute per webhook config, unless the config sets its own. */
  perConfig: number
  /** Requests per minute per client address with a key that matches no config. */
  perAddress: number
}

/**
 * Ingestion's own rate limit (decision 0012): per webhook config, not per source address,
 * so an alert storm from one Alertmanager is held to its config's limit and never refused by a
 * limit meant for browsers. A key that matches no enabled config counts against the client's
 * address instead: guessing keys is throttled like any failed authentication.
 */
export function ingestRouteLimit(
  limits: IngestLimits,
  findConfig: (apiKeyHash: string) => Promise<IngestConfig | undefined>,
  apiKeyOf: (request: FastifyRequest) => string = (request) => (request.params as { apiKey: string }).apiKey,
): RouteLimit {
  const configOf = new WeakMap<FastifyRequest, IngestConfig>()
  return {
    timeWindow: 60_000,
    async keyGenerator(request) {
      const config = await findConfig(hashApiKey(apiKeyOf(request)))
      if (!config) return `ingest-address:${request.ip}`
      configOf.set(request, config)
      return `ingest-config:${config.id}`
    },
    max(request) {
      const config = configOf.get(request)
      return config ? (config.rateLimitPerMinute ?? limits.perConfig) : limits.perAddress
    },
  }
}
