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
  const cookie = request.cookies?.[ID_TOKEN_COOKIE]
  if (cookie) return { token: cookie, source: 'cookie' }
  const bearer = bearerToken(request)
  return bearer ? { token: bearer, source: 'bearer' } : undefined
}

/** The credential of an `Authorization: Bearer <token>` header, if that is what was sent. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')
  return match?.[1]
}
