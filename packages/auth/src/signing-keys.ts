import { createPublicKey, type JsonWebKey } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { UnauthorizedError } from '@svc/http'

export interface SigningKeyResolverOptions {
  /** The issuer's JWKS address; keys are fetched from here and nowhere else. */
  jwksUrl: string
  /** Fetches allowed for unknown key ids in any sliding minute (ARCHITECTURE.md: 5). */
  fetchesPerMinute?: number
  /** How long the key set is fresh; past it, it is still served while a refetch runs. */
  cacheTtlMs?: number
  /** Past this age the key set is refetched in the background, before it expires. */
  refreshAfterMs?: number
  /** A key set this old is no longer served at all, however the identity provider fails. */
  maxStaleMs?: number
  /** How long a key id the set does not hold is refused without a fetch. */
  unknownKidTtlMs?: number
  now?: () => number
}

export interface TokenHeader {
  kid?: string
  alg?: string
}

const ALGORITHM = 'RS256'
const MINUTE = 60_000
/** A failed background refresh is tried again after this long, not on every request. */
const RETRY_AFTER_FAILURE_MS = 30_000

interface KeySet {
  pems: Map<string, string>
  fetchedAt: number
}

/**
 * Resolves a token's `kid` to a PEM public key from the configured JWKS, holding the whole key
 * set. Written here rather than with get-jwks, which caches key by key and re-fetches a key it
 * held through the same path as an unknown one: a storm of forged `kid`s spent the fetch budget,
 * and once the real key's entry aged out every new session got 401 until the storm stopped.
 *
 * - A known key is always answered from memory. Past `refreshAfterMs` the set is refetched in
 *   the background, outside the budget; past `cacheTtlMs` the stale key keeps serving while
 *   that refetch runs (up to `maxStaleMs`). One refetch at a time.
 * - An unknown `kid` may trigger a fetch only while fewer than `fetchesPerMinute` such fetches
 *   happened in the last minute; a `kid` the fetched set does not hold is refused without a
 *   request for `unknownKidTtlMs` (negative cache). So forged `kid`s cost at most the budget.
 * - The address is pinned to the configured JWKS URL, never derived from a token.
 */
export function createSigningKeyResolver(options: SigningKeyResolverOptions) {
  const budget = options.fetchesPerMinute ?? 5
  const ttl = options.cacheTtlMs ?? 10 * MINUTE
  const refreshAfter = options.refreshAfterMs ?? Math.floor(ttl * 0.8)
  const maxStale = options.maxStaleMs ?? 24 * 60 * MINUTE
  const now = options.now ?? Date.now
  const unknownKids = new LRUCache<string, number>({ max: 10_000 })
  // As long as the fetch budget's window: a key id found unknown costs at most one fetch a
  // minute, and a key the issuer publishes after a token first named it works a minute later.
  const unknownKidTtl = options.unknownKidTtlMs ?? MINUTE
  const fetchTimes: number[] = []
  let fetchesMade = 0
  let keySet: KeySet | undefined
  let inFlight: Promise<KeySet> | undefined
  let lastFailureAt = -Infinity

  function withinBudget(): boolean {
    const windowStart = now() - MINUTE
    while (fetchTimes.length > 0 && (fetchTimes[0] ?? 0) <= windowStart) fetchTimes.shift()
    if (fetchTimes.length >= budget) return false
    fetchTimes.push(now())
    return true
  }

  async function download(): Promise<KeySet> {
    fetchesMade += 1
    const response = await fetch(options.jwksUrl, { signal: AbortSignal.timeout(5_000), headers: { accept: 'application/json' } })
    if (!response.ok) throw new Error(`JWKS answered HTTP ${response.status}`)
    const body = (await response.json()) as { keys?: Array<JsonWebKey & { kid?: string; alg?: string; use?: string }> }
    const pems = new Map<string, string>()
    for (const jwk of body.keys ?? []) {
      if (
        typeof jwk.kid !== 'string' ||
        jwk.kty !== 'RSA' ||
        (jwk.alg !== undefined && jwk.alg !== ALGORITHM) ||
        (jwk.use !== undefined && jwk.use !== 'sig')
      )
        continue
      pems.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString())
    }
    return { pems, fetchedAt: now() }
  }

  /** One fetch of the whole set at a time; every caller waiting shares it. */
  function refetch(): Promise<KeySet> {
    inFlight ??= download()
      .then((fetched) => {
        keySet = fetched
        return fetched
      })
      .catch((error: unknown) => {
        lastFailureAt = now()
        throw error
      })
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }

  function refreshInBackground(): void {
    if (inFlight || now() - lastFailureAt < RETRY_AFTER_FAILURE_MS) return
    // A failure keeps the set it had: the next attempt comes after RETRY_AFTER_FAILURE_MS.
    refetch().catch(() => undefined)
  }

  function knownKey(kid: string): string | undefined {
    if (!keySet) return undefined
    const age = now() - keySet.fetchedAt
    if (age > maxStale) return undefined
    const pem = keySet.pems.get(kid)
    if (pem !== undefined && age > refreshAfter) refreshInBackground()
    return pem
  }

  async function resolve(header: TokenHeader): Promise<string> {
    if (header.alg !== ALGORITHM) throw new UnauthorizedError(`token algorithm must be ${ALGORITHM}`)
    const kid = header.kid
    if (!kid) throw new UnauthorizedError('token has no key id (kid)')
    const known = knownKey(kid)
    if (known !== undefined) return known

    const refusedUntil = unknownKids.get(kid)
    if (refusedUntil !== undefined && refusedUntil > now()) throw new UnauthorizedError('token is signed with an unknown key')
    // A fetch already under way answers this kid too, at no cost to the budget.
    if (!inFlight && !withinBudget()) throw new UnauthorizedError('token is signed with an unknown key')
    let fetched: KeySet
    try {
      fetched = await refetch()
    } catch {
      throw new UnauthorizedError('the signing keys could not be fetched')
    }
    const pem = fetched.pems.get(kid)
    if (pem === undefined) {
      unknownKids.set(kid, now() + unknownKidTtl)
      throw new UnauthorizedError('token is signed with an unknown key')
    }
    return pem
  }

  return {
    resolve,
    /** JWKS requests made so far (tests assert the budget). */
    get fetchesMade() {
      return fetchesMade
    },
    /** Settles once no refetch is under way (tests wait for a background refresh). */
    async settled(): Promise<void> {
      await inFlight?.catch(() => undefined)
    },
  }
}

export type SigningKeyResolver = ReturnType<typeof createSigningKeyResolver>
