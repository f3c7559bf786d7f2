import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { ForbiddenError } from '@svc/http'
import { ID_TOKEN_COOKIE, REFRESH_TOKEN_COOKIE } from './token-extraction.js'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function carriesAuthCookies(request: FastifyRequest): boolean {
  return Boolean(request.cookies?.[ID_TOKEN_COOKIE] || request.cookies?.[REFRESH_TOKEN_COOKIE])
}

/**
 * Cross-site request forgery guard for cookie sessions. SameSite=Lax does not stop a
 * sibling subdomain (same site) from posting with the user's cookies, so a state-changing
 * request that carries the auth cookies, or that asks for them to be set, must come from an
 * allowed origin when the browser names one. Requests without `Origin` (API clients,
 * server-to-server calls) are not browsers acting on a user's behalf and pass.
 */
export function rejectForeignOrigins(allowedOrigins: string[]): onRequestAsyncHookHandler {
  const allowed = new Set(allowedOrigins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()))
  return async function originCheck(request) {
    if (SAFE_METHODS.has(request.method)) return
    const origin = request.headers.origin
    if (origin === undefined) return
    const cookieBound = carriesAuthCookies(request) || request.routeOptions.url === '/auth/set-cookie'
    if (!cookieBound) return
    if (!allowed.has(origin.toLowerCase())) {
      throw new ForbiddenError(`origin ${origin} may not make cookie-authenticated changes`)
    }
  }
}
