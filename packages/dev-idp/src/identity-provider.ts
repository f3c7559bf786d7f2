import { createHash, randomUUID } from 'node:crypto'
import { createSigner, createVerifier } from 'fast-jwt'
import type { SigningKey } from './signing-key.js'

export interface DevIdentityProviderOptions {
  /** `iss` of every token; the JWKS and token endpoints live under it. */
  issuer: string
  /** App client id: the `aud` of ID tokens. */
  clientId: string
  key: SigningKey
  groupsClaim?: string
  /** When set, the token endpoint requires it by HTTP Basic, as a Cognito app client with a secret does. */
  clientSecret?: string
}

export interface TokenSubject {
  email: string
  /** Defaults to a stable id derived from the e-mail, so one address is one user. */
  sub?: string
  groups?: string[]
  /** Defaults to true, as for a Cognito user who confirmed the address. */
  emailVerified?: boolean
  name?: string
  givenName?: string
  familyName?: string
}

const ID_TOKEN_SECONDS = 60 * 60
const REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60

/** A stable UUID-shaped subject per e-mail address. */
export function subjectForEmail(email: string): string {
  const hex = createHash('sha256').update(email.trim().toLowerCase()).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * A development identity provider shaped like a Cognito user pool: RS256 ID tokens with
 * `token_use: id`, `cognito:groups`, `aud` = the app client, one-hour expiry, and refresh
 * tokens that its token endpoint exchanges for new ID tokens.
 */
export function createDevIdentityProvider(options: DevIdentityProviderOptions) {
  const { issuer, clientId, key } = options
  const groupsClaim = options.groupsClaim ?? 'cognito:groups'
  const sign = createSigner({ key: key.privateKeyPem, algorithm: 'RS256', kid: key.kid })
  const verifyRefresh = createVerifier({
    key: key.publicKeyPem,
    algorithms: ['RS256'],
    allowedIss: issuer,
    allowedAud: clientId,
  })

  function mintIdToken(subject: TokenSubject, lifetimeSeconds = ID_TOKEN_SECONDS): string {
    const now = Math.floor(Date.now() / 1000)
    const sub = subject.sub ?? subjectForEmail(subject.email)
    return sign({
      sub,
      email: subject.email,
      email_verified: subject.emailVerified ?? true,
      ...(subject.name ? { name: subject.name } : {}),
      ...(subject.givenName ? { given_name: subject.givenName } : {}),
      ...(subject.familyName ? { family_name: subject.familyName } : {}),
      [groupsClaim]: subject.groups ?? [],
      'cognito:username': sub,
      iss: issuer,
      aud: clientId,
      token_use: 'id',
      auth_time: now,
      iat: now,
      exp: now + lifetimeSeconds,
      jti: randomUUID(),
    })
  }

  function mintRefreshToken(subject: TokenSubject): string {
    const now = Math.floor(Date.now() / 1000)
    return sign({
      sub: subject.sub ?? subjectForEmail(subject.email),
      email: subject.email,
      groups: subject.groups ?? [],
      iss: issuer,
      aud: clientId,
      token_use: 'refresh',
      iat: now,
      exp: now + REFRESH_TOKEN_SECONDS,
      jti: randomUUID(),
    })
  }

  const revoked = new Set<string>()

  function refreshClaims(token: string): { sub: string; email: string; groups: string[]; token_use: string; jti: string } | undefined {
    try {
      const claims = verifyRefresh(token) as { sub: string; email: string; groups: string[]; token_use: string; jti: string }
      return claims.token_use === 'refresh' ? claims : undefined
    } catch {
      return undefined
    }
  }

  /** The subject of a refresh token this provider issued and did not revoke, or undefined (RFC 6749 invalid_grant). */
  function redeemRefreshToken(token: string): TokenSubject | undefined {
    const claims = refreshClaims(token)
    if (!claims || revoked.has(claims.jti)) return undefined
    return { sub: claims.sub, email: claims.email, groups: claims.groups }
  }

  /** RFC 7009: revoking an unknown or invalid token is not an error. */
  function revokeRefreshToken(token: string): void {
    const claims = refreshClaims(token)
    if (claims) revoked.add(claims.jti)
  }

  return {
    issuer,
    clientId,
    clientSecret: options.clientSecret,
    key,
    jwks: () => ({ keys: [key.jwk] }),
    mintIdToken,
    mintRefreshToken,
    redeemRefreshToken,
    revokeRefreshToken,
  }
}

export type DevIdentityProvider = ReturnType<typeof createDevIdentityProvider>
