import cookie, { type CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { UnauthorizedError, UpstreamError } from '@svc/http'
import { AuthenticatedUserSchema } from './identity.js'
import { exchangeRefreshToken, revokeRefreshToken } from './refresh-exchange.js'
import { ID_TOKEN_COOKIE, REFRESH_TOKEN_COOKIE, cookiesOf } from './token-extraction.js'

const ID_TOKEN_MAX_AGE = 60 * 60
const REFRESH_TOKEN_MAX_AGE = 30 * 24 * 60 * 60
/** Refresh exchanges per client address per minute: each one costs a call to the identity provider. */
const REFRESH_LIMIT = { max: 10, timeWindow: 60_000 }

const SessionResponse = Type.Object({
  status: Type.Literal('ok'),
  expiresAt: Type.String({ format: 'date-time', description: 'When the ID token in the cookie expires' }),
})

/**
 * The cookie endpoints shared by both services (spec: "Cookie endpoints"). Browsers keep
 * no tokens in storage: the services hold them in httpOnly cookies on the shared domain.
 */
export const cookieRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Registered here, inside this plugin, so its hook runs only on the answers that set cookies.
  await app.register(cookie, { hook: false })
  const { cookies, clientIds, clientSecret, tokenUrl, revokeUrl } = app.auth
  const base: CookieSerializeOptions = {
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
    path: '/',
    ...(cookies.domain ? { domain: cookies.domain } : {}),
  }

  // The refresh token is only ever read by /auth/refresh and /auth/logout: the browser need not
  // send it with any other request.
  const refreshCookie: CookieSerializeOptions = { ...base, path: '/auth' }

  function setIdToken(reply: FastifyReply, token: string): void {
    reply.setCookie(ID_TOKEN_COOKIE, token, { ...base, maxAge: ID_TOKEN_MAX_AGE })
  }
  function setRefreshToken(reply: FastifyReply, token: string): void {
    reply.setCookie(REFRESH_TOKEN_COOKIE, token, { ...refreshCookie, maxAge: REFRESH_TOKEN_MAX_AGE })
  }
  function clearSession(reply: FastifyReply): void {
    // Refresh cookies set before it moved to Path=/auth are cleared at `/` too.
    reply.clearCookie(ID_TOKEN_COOKIE, base).clearCookie(REFRESH_TOKEN_COOKIE, refreshCookie).clearCookie(REFRESH_TOKEN_COOKIE, base)
  }
  const expiresAt = (exp: number) => new Date(exp * 1000).toISOString()

  app.post(
    '/auth/set-cookie',
    {
      schema: {
        tags: ['auth'],
        summary: 'Store the identity provider tokens in httpOnly cookies',
        description: 'The ID token is verified before any cookie is set.',
        security: [],
        body: Type.Object(
          { idToken: Type.String({ minLength: 1 }), refreshToken: Type.Optional(Type.String({ minLength: 1 })) },
          { additionalProperties: false },
        ),
        response: { 200: SessionResponse },
      },
      // The credential travels in the body, so the header/cookie rule does not apply.
      config: { public: true },
    },
    async (request, reply) => {
      const claims = await app.verifyIdToken(request, request.body.idToken)
      await app.recordSessionActivity(request, claims, 'sign_in')
      setIdToken(reply, request.body.idToken)
      if (request.body.refreshToken) setRefreshToken(reply, request.body.refreshToken)
      return { status: 'ok' as const, expiresAt: expiresAt(claims.exp) }
    },
  )

  app.get(
    '/auth/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The current user of the session (cookie) or of the Bearer token',
        response: { 200: AuthenticatedUserSchema },
      },
    },
    async (request) => request.user,
  )

  app.post(
    '/auth/refresh',
    {
      schema: {
        tags: ['auth'],
        summary: 'Exchange the refresh cookie for a new ID token cookie',
        description: 'Limited to 10 a minute per client address; without a refresh cookie it answers 401 and calls nobody.',
        security: [{ cookieAuth: [] }],
        response: { 200: SessionResponse },
      },
      config: { public: true, limit: REFRESH_LIMIT },
    },
    async (request, reply) => {
      const refreshToken = cookiesOf(request)[REFRESH_TOKEN_COOKIE]
      if (!refreshToken) throw new UnauthorizedError('no refresh cookie: sign in again')
      const outcome = await exchangeRefreshToken({ tokenUrl, clientId: clientIds[0] ?? '', clientSecret, refreshToken })
      if (outcome.kind === 'invalid_grant') {
        clearSession(reply)
        throw new UnauthorizedError('the refresh token is no longer valid: sign in again')
      }
      if (outcome.kind === 'failed') throw new UpstreamError(`the identity provider refused the refresh: ${outcome.reason}`)
      const claims = await app.verifyIdToken(request, outcome.idToken)
      await app.recordSessionActivity(request, claims, 'session_refresh')
      setIdToken(reply, outcome.idToken)
      if (outcome.refreshToken) setRefreshToken(reply, outcome.refreshToken)
      return { status: 'ok' as const, expiresAt: expiresAt(claims.exp) }
    },
  )

  app.post(
    '/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Clear the auth cookies',
        description:
          'With AUTH_REVOKE_URL set, the refresh token is revoked at the identity provider first; a provider that fails does not stop the logout.',
        security: [],
        response: { 204: Type.Null() },
      },
      config: { public: true },
    },
    async (request, reply) => {
      const refreshToken = cookiesOf(request)[REFRESH_TOKEN_COOKIE]
      if (revokeUrl && refreshToken) {
        const failure = await revokeRefreshToken({ revokeUrl, clientId: clientIds[0] ?? '', clientSecret, refreshToken })
        if (failure) request.log.warn({ reason: failure }, 'the identity provider did not revoke the refresh token')
      }
      clearSession(reply)
      return reply.code(204).send(null)
    },
  )
}
