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

export async function connectSharedState(url: string, nameSpace: string, log: Logger): Promise<SharedState> {
  // No offline queue: while Redis is unreachable a command fails at once (the rate limit then
  // lets the request through) instead of holding the request until Redis is back.
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  const subscriber = new Redis(url, { lazyConnect: true })
  for (const [role, client] of [
    ['commands', redis],
    ['subscriber', subscriber],
  ] as const) {
    client.on('error', (error: Error) => log.warn({ err: error, redis: role }, 'Redis connection error; reconnecting'))
  }
  const channel = `${nameSpace}sessions:forget`
  const handlers: Array<(userId: string) => void> = []
  try {
    await redis.connect()
    await subscriber.connect()
    await subscriber.subscribe(channel)
  } catch (error) {
    redis.disconnect()
    subscriber.disconnect()
    throw new Error(`REDIS_URL: cannot reach Redis (${(error as Error).message})`, { cause: error })
  }
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
