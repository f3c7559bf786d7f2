import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ID_TOKEN_COOKIE, bearerToken, cookiesOf, findMembership } from '@svc/auth'
import type { PublicPage } from '../public/cache.js'
import { viewerSession } from '../queries/viewers.js'
import { tokenHash } from '../subscribers/subscribe.js'

/** The cookie a reader signed in by an e-mailed link holds, scoped to the page's root path. */
export const VIEWER_COOKIE = 'svc_statuspage_viewer'
/** The cookie a reader who followed an audience's link holds (its token), scoped to the page's root path. */
export const AUDIENCE_COOKIE = 'svc_statuspage_audience'

/** The domain of an address, lower-case: what a page's `viewerEmailDomains` are matched against. */
export const emailDomainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase()

/** Whether an address may sign in to a page by e-mail: its domain is one of the page's, exactly (no subdomains). */
export const emailMayRead = (email: string, domains: readonly string[]) => domains.includes(emailDomainOf(email))

/** Every domain whose addresses may sign in to the page: a private page's readers' and its audiences'. */
export const signInDomains = (page: Pick<PublicPage, 'visibility' | 'viewerEmailDomains' | 'audiences'>): string[] => [
  ...(page.visibility === 'private' ? page.viewerEmailDomains : []),
  ...page.audiences.flatMap((audience) => audience.emailDomains),
]

/** What a reader of no audience sees: what is tagged for none. */
export const NO_AUDIENCE: readonly string[] = Object.freeze([])

/** The audience a link's token names, if it is one of the page's. */
export const audienceOfToken = (page: Pick<PublicPage, 'audiences'>, token: string | undefined) => {
  if (!token) return undefined
  const hash = tokenHash(token)
  return page.audiences.find((audience) => audience.linkTokenHash === hash)
}

/**
 * Who reads a page, as the audiences whose tagged components and incidents they see (decision
 * 0015, "Private pages" and "Audiences"), or null when they may not read it at all:
 * - a member of its organization (the platform's `svc_id_token` cookie or a Bearer ID token)
 *   reads it whole: every audience;
 * - a reader signed in by an e-mailed link reads as the audiences of their address's domain, and
 *   may read a private page while the page or one of its audiences still allows that domain;
 * - a reader holding an audience's link token (`?audience=`, or the cookie its link sets) reads as
 *   that audience, and may read a private page;
 * - anyone else reads a public page as no audience. A private page is not found for them, as for
 *   a slug no page has: a 401 would say it exists.
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
  /** The domain of the reader signed in to the page by e-mail, while the page still lets it sign in. */
  async function signedInDomain(request: FastifyRequest, page: PublicPage): Promise<string | undefined> {
    const token = cookiesOf(request)[VIEWER_COOKIE]
    const domains = signInDomains(page)
    if (!token || domains.length === 0) return undefined
    const session = await viewerSession(database.db, page.id, tokenHash(token))
    return session && emailMayRead(session.email, domains) ? emailDomainOf(session.email) : undefined
  }
  return async function readerOf(request: FastifyRequest, page: PublicPage): Promise<readonly string[] | null> {
    if (page.audiences.length === 0) {
      if (page.visibility === 'public') return NO_AUDIENCE
      return (await signedInDomain(request, page)) !== undefined || (await member(request, page)) ? NO_AUDIENCE : null
    }
    const audiences = new Set<string>()
    const query = request.query as { audience?: string } | undefined
    const linked = audienceOfToken(page, query?.audience ?? cookiesOf(request)[AUDIENCE_COOKIE])
    if (linked) audiences.add(linked.id)
    const domain = await signedInDomain(request, page)
    if (domain) for (const audience of page.audiences) if (audience.emailDomains.includes(domain)) audiences.add(audience.id)
    if (await member(request, page)) return page.audiences.map((audience) => audience.id)
    if (page.visibility === 'private' && !linked && !domain) return null
    return audiences.size === 0 ? NO_AUDIENCE : [...audiences].sort()
  }
}

export type ReaderCheck = ReturnType<typeof createReaderCheck>
