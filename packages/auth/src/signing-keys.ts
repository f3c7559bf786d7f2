import buildGetJwks from 'get-jwks'
import { UnauthorizedError } from '@svc/http'

export interface SigningKeyResolverOptions {
  /** The issuer's JWKS address; keys are fetched from here and nowhere else. */
  jwksUrl: string
  /** Fetches allowed for unknown key ids in any sliding minute (the spec's limit is 5). */
  fetchesPerMinute?: number
  /** How long a fetched key is trusted before it is fetched again. */
  cacheTtlMs?: number
  now?: () => number
}

export interface TokenHeader {
  kid?: string
  alg?: string
}

const ALGORITHM = 'RS256'
const MINUTE = 60_000

/**
 * Resolves a token's `kid` to a PEM public key from the configured JWKS.
 *
 * get-jwks does the fetching and caching, but on its own it fetches on every cache miss and
 * derives the JWKS address from the token's issuer. Here the address is pinned to the
 * configured JWKS URL and misses share a budget of `fetchesPerMinute` per process: once it
 * is spent, a token with a key id we do not hold is refused without a request, so a flood of
 * forged `kid`s cannot turn this service into a load generator against the identity provider.
 */
export function createSigningKeyResolver(options: SigningKeyResolverOptions) {
  const url = new URL(options.jwksUrl)
  const domain = `${url.origin}/`
  const jwksPath = `${url.pathname}${url.search}`
  const budget = options.fetchesPerMinute ?? 5
  const now = options.now ?? Date.now
  const fetchTimes: number[] = []
  let fetchesMade = 0

  const jwks = buildGetJwks({
    jwksPath,
    issuersWhitelist: [domain],
    ttl: options.cacheTtlMs ?? 10 * MINUTE,
    max: 100,
  })
  // jwk-to-pem is slow next to a cache hit; convert each cached JWK once.
  const pemByJwk = new WeakMap<object, string>()

  function mayFetch(): boolean {
    const windowStart = now() - MINUTE
    while (fetchTimes.length > 0 && (fetchTimes[0] ?? 0) <= windowStart) fetchTimes.shift()
    if (fetchTimes.length >= budget) return false
    fetchTimes.push(now())
    fetchesMade += 1
    return true
  }

  async function resolve(header: TokenHeader): Promise<string> {
    if (header.alg !== ALGORITHM) throw new UnauthorizedError(`token algorithm must be ${ALGORITHM}`)
    const kid = header.kid
    if (!kid) throw new UnauthorizedError('token has no key id (kid)')
    const signature = { domain, alg: ALGORITHM, kid }
    const cached = jwks.cache.get(jwks.generateCacheKey(ALGORITHM, kid, domain)) !== undefined
    if (!cached && !mayFetch()) throw new UnauthorizedError('token is signed with an unknown key')
    let jwk: object
    try {
      jwk = (await jwks.getJwk(signature)) as object
    } catch {
      throw new UnauthorizedError('token is signed with an unknown key')
    }
    let pem = pemByJwk.get(jwk)
    if (!pem) {
      pem = await jwks.getPublicKey(signature)
      pemByJwk.set(jwk, pem)
    }
    return pem
  }

  return {
    resolve,
    /** JWKS requests made so far (tests assert the budget). */
    get fetchesMade() {
      return fetchesMade
    },
  }
}

export type SigningKeyResolver = ReturnType<typeof createSigningKeyResolver>
