import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ID_TOKEN_COOKIE, bearerToken, cookiesOf, findMembership } from '@svc/auth'
import type { PublicPage } from '../public/cache.js'
import { viewerSession } from '../queries/viewers.js'
import { tokenHash } from '../subscribers/subscribe.js'

/** The cookie a reader signed in by an e-mailed link holds, scoped to the page's root path. */
export const VIEWER_COOKIE = 'svc_statuspage_viewer'

/** The domain of an address, lower-case: what a page's `viewerEmailDomains` are matched against. */
export const emailDomainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase()

/** Whether an address may sign in to a page by e-mail: its domain is one of the page's, exactly (no subdomains). */
export const emailMayRead = (email: string, domains: readonly string[]) => domains.includes(emailDomainOf(email))

/**
 * Who may read a page (decision 0015, "Private pages"): anyone, for a public page; for a private
 * one, a member of its organization (the platform's `svc_id_token` cookie or a Bearer ID token)
 * or a reader signed in by an e-mailed link whose address's domain the page still allows. Anyone
 * else is told the page is not found, as for a slug no page has: a 401 would say it exists.
 */
export function createReaderCheck(app: FastifyInstance) {
  const { database } = app
  async function member(request: FastifyRequest, page: PublicPage): Promise<boolean> {
    if (!cookiesOf(request)[ID_TOKEN_COOKIE] && !bearerToken(request)) return false
    try {
      await app.authenticate(request)
    } catch {
      // An expired or foreign token reads as no credential: the answer must not differ.
      return false
    }
    if (request.apiToken) return false
    return (await findMembership(database, page.organizationId, request.user.userId)) !== undefined
  }
  async function signedIn(request: FastifyRequest, page: PublicPage): Promise<boolean> {
    const token = cookiesOf(request)[VIEWER_COOKIE]
    if (!token || page.viewerEmailDomains.length === 0) return false
    const session = await viewerSession(database.db, page.id, tokenHash(token))
    return session !== undefined && emailMayRead(session.email, page.viewerEmailDomains)
  }
  return async function mayRead(request: FastifyRequest, page: PublicPage): Promise<boolean> {
    if (page.visibility === 'public') return true
    return (await signedIn(request, page)) || (await member(request, page))
  }
}

export type ReaderCheck = ReturnType<typeof createReaderCheck>
