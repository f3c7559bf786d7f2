import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import { ForbiddenError } from '@svc/http'
import { ID_TOKEN_COOKIE, REFRESH_TOKEN_COOKIE, cookiesOf } from './token-extraction.js'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function carriesAuthCookies(request: FastifyRequest): boolean {
  const cookies = cookiesOf(request)
  return Boolean(cookies[ID_TOKEN_COOKIE] || cookies[REFRESH_TOKEN_COOKIE])
}

/**
 * Cross-site request forgery guard for cookie sessions. SameSite=Lax does not stop a
 * sibling subdomain (same site) from posting with the user's cookies, so a state-changing
 * request that carries the auth cookies, or that asks for them to be set, must come from an
 * allowed origin when the browser names one. Requests without `Origin` (API clients,
 * server-to-server calls) are not browsers acting on a user's behalf and pass.
 */
export function rejectForeignOrigins(allowedOrigins: string[]): onRequestHookHandler {
  const allowed = new Set(allowedOrigins.map((origin) => origin.replace(/(?<!\/)\/+$/, '').toLowerCase()))
  // A callback hook, not an async one: every request passes through it, most of them at the
  // first line, and an async hook would cost each a promise.
  return function originCheck(request, _reply, done) {
    const origin = request.headers.origin
    if (SAFE_METHODS.has(request.method) || origin === undefined) return done()
    const cookieBound = carriesAuthCookies(request) || request.routeOptions.url === '/auth/set-cookie'
    if (cookieBound && !allowed.has(origin.toLowerCase())) {
      return done(new ForbiddenError(`origin ${origin} may not make cookie-authenticated changes`))
    }
    done()
  }
}
