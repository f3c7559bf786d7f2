import rateLimit, { normalizeIP, type RateLimitOptions } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import { format, parse } from '@lukeed/ms'
import { LRUCache } from 'lru-cache'
import type { FastifyInstance, RouteOptions, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify'
import type { Redis } from 'ioredis'
import { TooManyRequestsError } from './errors.js'

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
    limiterFor(route: Pick<RouteOptions, 'config'>): onRequestHookHandler | onRequestAsyncHookHandler | undefined
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
  const perAddress = shared ? (app.rateLimit() as onRequestAsyncHookHandler) : perAddressInMemory(settings)
  app.decorate('limiterFor', function limiterFor(route: Pick<RouteOptions, 'config'>) {
    const limit = (route.config as { limit?: RouteLimit | false } | undefined)?.limit
    if (limit === false) return undefined
    return limit ? (app.rateLimit(limit) as onRequestAsyncHookHandler) : perAddress
  })
}

/**
 * The per-address limit of a single replica (no REDIS_URL), which every route without a limit of
 * its own pays for: the library's own in-memory store and key (the address, IPv6 by /64) and the
 * library's headers and 429, but in a callback hook. @fastify/rate-limit's hook is async and
 * awaits three times per request even when its store answers at once, which cost about a sixth of
 * `GET /users/me` in `pnpm bench` (docs/benchmarks.md). The Redis store is asynchronous, so
 * shared counters and route limits keep the library's hook.
 */
function perAddressInMemory(settings: RateLimitSettings): onRequestHookHandler {
  const store = new LocalStore(false, false)
  const keyOf = addressKeys()
  const { max } = settings
  const timeWindow = parse(settings.timeWindow)
  if (timeWindow === undefined) throw new Error(`rate limit window ${JSON.stringify(settings.timeWindow)} is not a duration`)
  return function perAddressLimit(request, reply, done) {
    store.incr(
      keyOf(request.ip),
      (_error, window) => {
        const resetSeconds = Math.ceil(window.ttl / 1000)
        reply.header('x-ratelimit-limit', max)
        reply.header('x-ratelimit-remaining', Math.max(0, max - window.current))
        reply.header('x-ratelimit-reset', resetSeconds)
        if (window.current <= max) return done()
        reply.header('retry-after', resetSeconds)
        done(new TooManyRequestsError(`Rate limit exceeded, retry in ${format(resetSeconds * 1000, true)}`))
      },
      timeWindow,
      max,
    )
  }
}

/**
 * The library's counter key for a client address (`normalizeIP`: an IPv6 address by its /64),
 * without its cost on every request. An IPv4 address is its own key: the library only lowercases
 * it, after testing it against an IPv6 pattern that cost about 1 µs a request. An IPv6 address is
 * parsed twice by the library (its /64 computed), so its keys are remembered, for a few thousand
 * addresses.
 */
function addressKeys(): (address: string) => string {
  const ipv6Keys = new LRUCache<string, string>({ max: 4_096 })
  return (address) => {
    if (!address.includes(':')) return address
    let key = ipv6Keys.get(address)
    if (key === undefined) {
      key = normalizeIP(address)
      ipv6Keys.set(address, key)
    }
    return key
  }
}
