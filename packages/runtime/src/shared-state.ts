import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/**
 * What replicas share through Redis (REDIS_URL): the rate-limit counters (through the client,
 * used by @fastify/rate-limit's Redis store) and the session cache's invalidations (pub/sub).
 */
export interface SharedState {
  redis: Redis
  /** Prefix of every key and channel, so several deployments can share one Redis. */
  nameSpace: string
  /** Publishes that a user's sessions must be forgotten by every replica. */
  announceForget(userId: string): void
  /** Called with each user id any replica (this one included) announced. */
  onForget(handler: (userId: string) => void): void
  close(): Promise<void>
}

/**
 * Connects to Redis without waiting for it: Redis is optional at run time (with it away, rate
 * limits let requests through uncounted and invalidations stay on this replica), so it is optional
 * at start too. A Redis that is not there yet is logged once and connected to when it appears;
 * ioredis keeps trying, and the subscription is made as soon as the subscriber connects.
 */
export async function connectSharedState(url: string, nameSpace: string, log: Logger): Promise<SharedState> {
  // No offline queue: while Redis is unreachable a command fails at once (the rate limit then
  // lets the request through) instead of holding the request until Redis is back.
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  const subscriber = new Redis(url, { lazyConnect: true })
  for (const [role, client] of [
    ['commands', redis],
    ['subscriber', subscriber],
  ] as const) {
    // One line when the connection goes (or is not there at start), one when it is back: not one per retry.
    let reachable = true
    client.on('error', (error: Error) => {
      if (reachable)
        log.warn({ err: error, redis: role }, 'Redis is unreachable: requests are not counted across replicas until it is back')
      reachable = false
    })
    client.on('ready', () => {
      if (!reachable) log.info({ redis: role }, 'Redis is reachable again')
      reachable = true
    })
  }
  const channel = `${nameSpace}sessions:forget`
  const handlers: Array<(userId: string) => void> = []
  // A first connection that fails is retried by ioredis; the queued subscription goes out then.
  await Promise.allSettled([redis.connect(), subscriber.connect()])
  subscriber.subscribe(channel).catch((error: Error) => log.warn({ err: error }, 'could not subscribe to session invalidations'))
  subscriber.on('message', (from: string, userId: string) => {
    if (from === channel) for (const handler of handlers) handler(userId)
  })
  return {
    redis,
    nameSpace,
    announceForget(userId) {
      redis.publish(channel, userId).catch((error: Error) => log.warn({ err: error }, 'could not announce a session invalidation'))
    },
    onForget(handler) {
      handlers.push(handler)
    },
    async close() {
      await Promise.allSettled([redis.quit(), subscriber.quit()])
    },
  }
}
