import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { TooManyRequestsError, type RouteLimit } from '@svc/http'
import { type IngestConfig } from './queries.js'
import { hashApiKey } from './configs/secrets.js'

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
  /** Where the request carries its key: a header or the path for most routes, the body for PagerDuty's. */
  apiKeyOf: (request: FastifyRequest) => string,
  guesses?: KeyGuesses,
): RouteLimit {
  const configOf = new WeakMap<FastifyRequest, IngestConfig>()
  return {
    timeWindow: 60_000,
    async keyGenerator(request) {
      const config = await findConfig(hashApiKey(apiKeyOf(request)))
      if (!config) {
        guesses?.record(request.ip)
        return `ingest-address:${request.ip}`
      }
      configOf.set(request, config)
      return `ingest-config:${config.id}`
    },
    max(request) {
      const config = configOf.get(request)
      return config ? (config.rateLimitPerMinute ?? limits.perConfig) : limits.perAddress
    },
  }
}

export type KeyGuesses = ReturnType<typeof keyGuesses>

/**
 * Where the key is in the body (PagerDuty's `routing_key`), the limit above can only run once the
 * body is read. This remembers, per address and minute, the deliveries whose key matched no
 * config, and `beforeBody` refuses an address past `perAddress` of them before its next body is
 * read: guessing keys then costs the guesser, not our parser. A sender with a real key never
 * counts here. Per process, like the parsing it saves.
 */
export function keyGuesses(limits: IngestLimits, windowMs = 60_000) {
  const byAddress = new Map<string, { count: number; resetAt: number }>()
  const KEPT = 10_000
  return {
    record(address: string, now = Date.now()): void {
      const window = byAddress.get(address)
      if (window && window.resetAt > now) window.count += 1
      else {
        if (byAddress.size >= KEPT) for (const [key, old] of byAddress) if (old.resetAt <= now) byAddress.delete(key)
        if (byAddress.size < KEPT) byAddress.set(address, { count: 1, resetAt: now + windowMs })
      }
    },
    beforeBody: async function refuseGuessers(request) {
      const window = byAddress.get(request.ip)
      if (window && window.resetAt > Date.now() && window.count >= limits.perAddress)
        throw new TooManyRequestsError(`too many deliveries with unknown keys from this address: retry in a minute`)
    } satisfies onRequestAsyncHookHandler,
  }
}
