import type { FastifyInstance, FastifySchema, RouteOptions, onRequestAsyncHookHandler } from 'fastify'
import { SCIM_BASE_PATH } from './scim-tokens.js'

export interface Gates {
  /** The route authenticates with a SCIM token (`config.scim`). */
  scim: onRequestAsyncHookHandler
  /** The global JWT rule. */
  jwt: onRequestAsyncHookHandler
  /** Membership of `:orgId`. */
  member: onRequestAsyncHookHandler
  /** Routes public by their prefix (the API reference, which takes no route config). */
  isPublic(url: string): boolean
}

function listed<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
}

/**
 * The order of the gates on every route (decision 0012): the rate limit, authentication (a
 * SCIM token, or the identity token unless the route is public), membership of `:orgId`, then
 * the access rules the route declares in `onRequest`. All of them run in `onRequest`, before
 * the body is read, so Fastify's validation comes after them: an outsider gets 404 and a member
 * without the role 403 whatever the body, a failed authentication counts against the limit.
 */
export function orderGates(app: FastifyInstance, gates: Gates): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const limiter = app.limiterFor(route)
    const scim = route.config?.scim === true
    // OPTIONS is the CORS preflight's route: a browser sends it without credentials.
    const isPublic = !scim && (route.config?.public === true || route.method === 'OPTIONS' || gates.isPublic(route.url))
    if (scim && route.url !== SCIM_BASE_PATH && !route.url.startsWith(`${SCIM_BASE_PATH}/`)) {
      throw new Error(`${route.method} ${route.url}: SCIM tokens authenticate only routes under ${SCIM_BASE_PATH}`)
    }
    // The OpenAPI document says so too (its default security is the cookie or the Bearer token).
    const schema: FastifySchema | undefined = route.schema
    if (isPublic && schema && schema.security === undefined) schema.security = []
    const authentication = scim ? [gates.scim] : isPublic ? [] : [gates.jwt]
    const member = !scim && !isPublic && route.url.includes('/organizations/:orgId') ? [gates.member] : []
    route.onRequest = [...(limiter ? [limiter] : []), ...authentication, ...member, ...listed(route.onRequest)]
  })
}
