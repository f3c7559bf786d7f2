import { LRUCache } from 'lru-cache'
import type { Account, AuthenticatedUser } from './identity.js'

export interface CachedSession {
  user: AuthenticatedUser
  account: Account
  /** Epoch ms after which the entry must not be used: the token's `exp`, or sooner. */
  validUntil: number
}

/**
 * Verified tokens and the accounts they resolved to. A token is verified (signature, claims)
 * once and then trusted until it expires; the account row rides along for `accountTtlMs`, so
 * a role or profile change elsewhere is seen within that time (at once in this process,
 * through `forget`). The key is the token itself: a Map hashes the string natively, which
 * is cheaper than a digest, and the token is in memory for the request anyway.
 */
export interface SessionCacheOptions {
  max?: number
  accountTtlMs?: number
  now?: () => number
  /** Tells the other replicas (REDIS_URL) that a user's sessions are to be forgotten. */
  announceForget?: (userId: string) => void
}

export function createSessionCache(options: SessionCacheOptions = {}) {
  const now = options.now ?? Date.now
  const accountTtlMs = options.accountTtlMs ?? 30_000
  const cache = new LRUCache<string, CachedSession>({ max: options.max ?? 10_000 })

  return {
    get(token: string): CachedSession | undefined {
      const entry = cache.get(token)
      if (entry === undefined) return undefined
      if (entry.validUntil <= now()) {
        cache.delete(token)
        return undefined
      }
      return entry
    },
    /** Entries are shared by every request with the token, so they are frozen. */
    set(token: string, user: AuthenticatedUser, account: Account, expiresAtSeconds: number): CachedSession {
      const entry: CachedSession = Object.freeze({
        user: Object.freeze(user),
        account: Object.freeze(account),
        validUntil: Math.min(expiresAtSeconds * 1000, now() + accountTtlMs),
      })
      cache.set(token, entry)
      return entry
    },
    /** Drops a user's sessions after their profile or roles changed, here and in every replica. */
    forget(userId: string): void {
      this.forgetHere(userId)
      options.announceForget?.(userId)
    },
    /** Drops a user's sessions in this process only: another replica's `forget` arriving. */
    forgetHere(userId: string): void {
      for (const [token, entry] of cache.entries()) if (entry.account.id === userId) cache.delete(token)
    },
  }
}

export type SessionCache = ReturnType<typeof createSessionCache>
