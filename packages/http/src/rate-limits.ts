import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit'
import type { FastifyInstance, RouteOptions, onRequestAsyncHookHandler } from 'fastify'
import type { Redis } from 'ioredis'

/**
 * A route's own limit, in place of the service's per-address one: its own counters (keyed by
 * `keyGenerator`, the client address by default), its own `max` per `timeWindow`.
 */
export type RouteLimit = Pick<RateLimitOptions, 'max' | 'timeWindow' | 'keyGenerator'>

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own limit, or `false` for none (health probes); unset: the service's per-address limit. */
    limit?: RouteLimit | false
  }
  interface FastifyInstance {
    /** The rate-limit hook of a route (see `limit`), or undefined when it has none. */
    limiterFor(route: Pick<RouteOptions, 'config'>): onRequestAsyncHookHandler | undefined
  }
}

export interface RateLimitSettings {
  max: number
  timeWindow: string
}

/** REDIS_URL's client: counters shared by every replica, under `nameSpace`. */
export interface SharedCounters {
  redis: Redis
  nameSpace: string
}

/**
 * @fastify/rate-limit without its own route hooks (`global: false`): the auth plugin puts each
 * route's limiter first among its gates (decision 0012), before authentication, so failed
 * authentications count too. 429 answers carry `Retry-After`. With `shared` (REDIS_URL) the
 * counters live in Redis, so N replicas allow `max` in all, not N × `max`; should Redis stop
 * answering, requests pass uncounted (`skipOnError`) rather than fail: a limit must not take
 * the API down with it.
 */
export async function registerRateLimits(app: FastifyInstance, settings: RateLimitSettings, shared?: SharedCounters): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: settings.max,
    timeWindow: settings.timeWindow,
    ...(shared ? { redis: shared.redis, nameSpace: `${shared.nameSpace}rate-limit:`, skipOnError: true } : {}),
  })
  const perAddress = app.rateLimit() as onRequestAsyncHookHandler
  app.decorate('limiterFor', function limiterFor(route: Pick<RouteOptions, 'config'>) {
    const limit = (route.config as { limit?: RouteLimit | false } | undefined)?.limit
    if (limit === false) return undefined
    return limit ? (app.rateLimit(limit) as onRequestAsyncHookHandler) : perAddress
  })
}
