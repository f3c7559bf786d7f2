import { parseCookie } from 'cookie'
import type { FastifyRequest } from 'fastify'

export const ID_TOKEN_COOKIE = 'svc_id_token'
export const REFRESH_TOKEN_COOKIE = 'svc_refresh_token'

export interface PresentedToken {
  token: string
  source: 'cookie' | 'bearer'
}

/**
 * The spec's extraction order: the `svc_id_token` cookie first, then `Authorization: Bearer`.
 * A cookie that is present wins even when it turns out invalid: the request then fails
 * instead of quietly falling back to another credential.
 */
export function presentedToken(request: FastifyRequest): PresentedToken | undefined {
  const cookie = cookiesOf(request)[ID_TOKEN_COOKIE]
  if (cookie) return { token: cookie, source: 'cookie' }
  const bearer = bearerToken(request)
  return bearer ? { token: bearer, source: 'bearer' } : undefined
}

const NO_COOKIES: Readonly<Record<string, string | undefined>> = Object.freeze({})

/**
 * The request's cookies, parsed when read, with `cookie` (the parser @fastify/cookie uses).
 * Most requests come from API clients with a Bearer token and never carry one, so no hook parses
 * them for every request, and @fastify/cookie is registered only by the routes that set cookies
 * (`cookieRoutes`): its hook on every answer cost the others for nothing. A request reads its
 * cookies once or twice, so they are not kept.
 */
export function cookiesOf(request: FastifyRequest): Readonly<Record<string, string | undefined>> {
  const header = request.headers.cookie
  return header ? parseCookie(header) : NO_COOKIES
}

/** The credential of an `Authorization: Bearer <token>` header, if that is what was sent. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')
  return match?.[1]
}
