import jwt, { type VerifyOptions } from '@fastify/jwt'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { AuthConfig, CookieConfig } from '@svc/config'
import type { Database } from '@svc/db'
import { ForbiddenError, NotFoundError, UnauthorizedError } from '@svc/http'
import { findAccountById, upsertAccountBySubject } from './accounts.js'
import { registerAccessRules } from './access-rules.js'
import { createActivityRecorder, type ActivityRecorder } from './activity.js'
import { createImpersonationLog } from './impersonation.js'
import { orderGates } from './gates.js'
import {
  PLATFORM_ADMINS_GROUP,
  emailVerifiedIn,
  groupsFrom,
  profileClaimsIn,
  type Account,
  type AuthenticatedUser,
  type IdTokenClaims,
} from './identity.js'
import { rejectForeignOrigins } from './origin-check.js'
import { authenticateApiToken, isApiToken, type ApiTokenPrincipal } from './api-tokens.js'
import { authenticateScimToken, type ScimPrincipal } from './scim-tokens.js'
import { createSessionCache, type CachedSession, type SessionCache } from './session-cache.js'
import { createSigningKeyResolver, type SigningKeyResolver, type TokenHeader } from './signing-keys.js'
import { bearerToken, presentedToken, type PresentedToken } from './token-extraction.js'
import { isUuid } from './uuid.js'

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: IdTokenClaims
    user: AuthenticatedUser
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is SCIM: a SCIM bearer token authenticates it, and nothing else does. */
    scim?: boolean
  }
  interface FastifyRequest {
    /** The SCIM token of a SCIM request and the one organization it may see. */
    scim: ScimPrincipal | null
    /** The organization API token a request authenticated with, acting for its creator (decision 0030). */
    apiToken: ApiTokenPrincipal | null
    /** The acting account (the impersonated one while impersonating). */
    account: Account | null
    /** Where the identity token came from; cookie-authenticated changes are origin-checked. */
    credentialSource: PresentedToken['source'] | null
  }
  interface FastifyInstance {
    /** Verifies the request's identity token and resolves `request.user` (the global JWT rule). */
    authenticate(request: FastifyRequest): Promise<void>
    /** Verifies an ID token handed over in a body; answers the token's claims or throws 401. */
    verifyIdToken(request: FastifyRequest, token: string): Promise<IdTokenClaims>
    /** A sign-in or session refresh with these verified claims, as user activity (the user row is created if new). */
    recordSessionActivity(request: FastifyRequest, claims: IdTokenClaims, kind: 'sign_in' | 'session_refresh'): Promise<void>
    /** User activity, written off the request path (decision 0022). */
    userActivity: ActivityRecorder
    /** Verified tokens with their accounts; `forget(userId)` after changing a user. */
    sessions: SessionCache
    auth: AuthConfig & { cookies: CookieConfig }
  }
}

export interface AuthPluginOptions {
  auth: AuthConfig
  cookies: CookieConfig
  database: Database
  /** Path prefixes served by plugins that take no route config (the API reference). */
  publicPrefixes?: string[]
  /** Shared between the services of one process so the JWKS budget is per process. */
  signingKeys?: SigningKeyResolver
  /** Shared likewise, so a user changed through one service is seen at once by the other. */
  sessions?: SessionCache
  /** Billing is on: product writes need the organization's plan (402 PLAN_REQUIRED). */
  enforcePlans?: boolean
  /** Which service this is, in the user activity it records. */
  product: 'platform' | 'product'
}

const IMPERSONATION_HEADER = 'x-impersonate-user-id'

/**
 * How many requests one API token may make per minute, whichever replica and address they come
 * from (with REDIS_URL, counted across replicas): PagerDuty allows 960 a minute per REST key,
 * incident.io 1,200 per API key. The per-address limit applies to token requests as to any.
 */
export const API_TOKEN_RATE_LIMIT = { max: 1_200, timeWindow: '1 minute' }

/**
 * The organization a request's path names (`:orgId`), which its activity counts toward. The member
 * rule has not run yet: a request for an organization the caller is not in is kept with it, and
 * its admins never see it, since they read the activity of their members only.
 */
function organizationNamedBy(request: FastifyRequest): string | undefined {
  const organizationId = (request.params as { orgId?: string } | undefined)?.orgId
  return isUuid(organizationId) ? organizationId : undefined
}

async function authPlugin(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const { db } = options.database
  const signingKeys = options.signingKeys ?? createSigningKeyResolver({ jwksUrl: options.auth.jwksUrl })
  const sessions = options.sessions ?? createSessionCache()
  const impersonations = createImpersonationLog(db)
  const activity = createActivityRecorder({ db, product: options.product, log: app.log.child({ component: 'user-activity' }) })
  app.decorate('userActivity', activity)
  app.addHook('onReady', async () => activity.start())
  app.addHook('onClose', async () => activity.stop())
  const seen = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? null, at: new Date() })

  await app.register(jwt, {
    secret: {
      public: async (_request: FastifyRequest, token: TokenHeader | { header: TokenHeader }) =>
        signingKeys.resolve('header' in token ? token.header : token),
    },
    decode: { complete: true },
    verify: {
      algorithms: ['RS256'],
      allowedIss: options.auth.issuer,
      allowedAud: options.auth.clientIds,
      requiredClaims: ['sub', 'exp', 'iss', 'aud'],
      clockTolerance: 5_000,
      extractToken: (request: FastifyRequest) => presentedToken(request)?.token,
    },
  })

  app.decorate('sessions', sessions)
  app.decorate('auth', { ...options.auth, cookies: options.cookies })
  app.decorateRequest('account', null)
  app.decorateRequest('credentialSource', null)
  app.decorateRequest('scim', null)
  app.decorateRequest('apiToken', null)

  async function verifiedClaims(request: FastifyRequest, token?: string): Promise<IdTokenClaims> {
    // @fastify/jwt honours `extractToken` in per-call options (lookupToken merges them with the
    // plugin's), though its types declare it only on the plugin options.
    const claims = token
      ? await request.jwtVerify<IdTokenClaims>({ extractToken: () => token } as Partial<VerifyOptions>)
      : await request.jwtVerify<IdTokenClaims>()
    if (claims.token_use !== undefined && claims.token_use !== 'id') {
      throw new UnauthorizedError('an access token cannot be used here: send the ID token')
    }
    if (typeof claims.email !== 'string' || claims.email.length === 0) {
      throw new UnauthorizedError('the ID token carries no email claim')
    }
    return claims
  }

  app.decorate('verifyIdToken', verifiedClaims)

  const accountOfClaims = (claims: IdTokenClaims) =>
    upsertAccountBySubject(db, {
      subject: claims.sub,
      email: claims.email as string,
      emailVerified: emailVerifiedIn(claims),
      profile: profileClaimsIn(claims),
    })

  app.decorate('recordSessionActivity', async (request: FastifyRequest, claims: IdTokenClaims, kind: 'sign_in' | 'session_refresh') => {
    const account = await accountOfClaims(claims)
    activity.record({ userId: account.id, kind, product: options.product, ...seen(request) })
  })

  /** First sight of a token: verify it, then create or update the user row by `sub`. */
  async function establishSession(request: FastifyRequest, token: string): Promise<CachedSession> {
    const claims = await verifiedClaims(request)
    const email = claims.email as string
    const groups = groupsFrom(claims[options.auth.groupsClaim])
    const account = await accountOfClaims(claims)
    const user = { userId: account.id, email, groups, isPlatformAdmin: groups.includes(PLATFORM_ADMINS_GROUP) }
    return sessions.set(token, user, account, claims.exp)
  }

  /**
   * An organization API token (decision 0030): only on a route of its organization, where it
   * acts for its creator; the access rules cap what it holds (access-rules.ts).
   */
  async function authenticateApiTokenRequest(request: FastifyRequest, token: string): Promise<void> {
    const organizationId = organizationNamedBy(request)
    if (!organizationId || !request.routeOptions.url?.includes('/organizations/:orgId'))
      throw new ForbiddenError(
        "an API token acts only on its organization's routes (/api/v1/organizations/:orgId/…); personal and platform-admin routes need a person's sign-in",
      )
    if (request.headers[IMPERSONATION_HEADER] !== undefined) throw new ForbiddenError('an API token cannot impersonate')
    const principal = await authenticateApiToken(db, token)
    if (!principal) throw new UnauthorizedError('the API token is unknown, revoked or expired, or its creator left the organization')
    // Another organization's routes look to a token as they look to a person who is not a member.
    if (principal.organizationId !== organizationId) throw new NotFoundError('organization')
    request.apiToken = principal
    request.credentialSource = 'bearer'
    request.account = principal.creator
    request.user = { userId: principal.creator.id, email: principal.creator.email, groups: [], isPlatformAdmin: false }
  }

  app.decorate('authenticate', async function authenticate(request: FastifyRequest): Promise<void> {
    const presented = presentedToken(request)
    if (!presented) {
      throw new UnauthorizedError('missing credentials: send the svc_id_token cookie or an Authorization: Bearer ID token')
    }
    if (presented.source === 'bearer' && isApiToken(presented.token)) return authenticateApiTokenRequest(request, presented.token)
    const session = sessions.get(presented.token) ?? (await establishSession(request, presented.token))
    request.credentialSource = presented.source
    request.account = session.account
    request.user = session.user

    const impersonated = request.headers[IMPERSONATION_HEADER]
    if (impersonated === undefined) {
      activity.recordApiUse(session.user.userId, organizationNamedBy(request), request.ip, request.headers['user-agent'])
      return
    }
    if (!request.user.isPlatformAdmin) throw new ForbiddenError('only platform admins can impersonate')
    const target = isUuid(impersonated) ? await findAccountById(db, impersonated) : undefined
    if (!target) throw new NotFoundError('user to impersonate')
    // Acting as a platform admin would be acting with every product role everywhere.
    if (target.platformRole !== null) throw new ForbiddenError('a user with a platform role cannot be impersonated')
    request.account = target
    // The impersonated user's groups live at the identity provider; acting as them grants none.
    request.user = {
      userId: target.id,
      email: target.email,
      groups: [],
      isPlatformAdmin: false,
      originalUserId: session.user.userId,
      originalEmail: session.user.email,
    }
    request.log.info({ userId: target.id, originalUserId: session.user.userId }, 'impersonated request')
    activity.record({
      userId: target.id,
      kind: 'impersonation',
      actedBy: session.user.userId,
      organizationId: organizationNamedBy(request),
      product: options.product,
      ...seen(request),
    })
    await impersonations.recordStart(request, presented.token)
  })

  // Forged cross-site requests are refused before any token work is spent on them.
  app.addHook('onRequest', rejectForeignOrigins(options.cookies.allowedOrigins))
  // The global JWT rule: every route added from here on needs a valid identity token unless
  // it is declared public. Attached per route at registration, so no request pays for the
  // decision, and an unknown path is a plain 404.
  const perToken = app.rateLimit({
    ...API_TOKEN_RATE_LIMIT,
    keyGenerator: (request: FastifyRequest) => `api-token:${request.apiToken?.tokenId ?? ''}`,
  }) as onRequestAsyncHookHandler
  const jwtRule = async function jwtRule(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    await app.authenticate(request)
    if (request.apiToken) await perToken.call(this, request, reply)
  }
  const publicPrefixes = options.publicPrefixes ?? []
  const isPublic = (url: string) => publicPrefixes.some((prefix) => url === prefix || url.startsWith(`${prefix}/`))
  // The SCIM rule: a bearer SCIM token, looked up by its hash; never the session cookie.
  const scimRule = async function scimRule(request: FastifyRequest) {
    const token = bearerToken(request)
    const principal = token ? await authenticateScimToken(db, token) : undefined
    if (!principal) throw new UnauthorizedError('a valid SCIM token is required')
    request.scim = principal
  }
  orderGates(app, {
    scim: scimRule,
    jwt: jwtRule,
    member: registerAccessRules(app, options.database, options.enforcePlans ?? false),
    isPublic,
  })
}

export default fp(authPlugin, { name: 'auth', fastify: '5.x', dependencies: ['http-conventions'] })
