import { randomBytes } from 'node:crypto'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import escapeHtml from 'escape-html'
import { cookiesOf } from '@svc/auth'
import type { Notifier } from '@svc/notifier'
import { LocaleTag, chooseLocale, messagesOf } from '../i18n/locales.js'
import { publicUrlOf } from '../pages/public-url.js'
import type { PublicCache, PublicPage } from '../public/cache.js'
import { HtmlPage, PUBLIC, PUBLIC_TAGS, SlugParams } from '../public/routes.js'
import {
  accessLinksSentSince,
  deleteViewerSession,
  insertAccessLink,
  insertViewerSession,
  pendingAccessLink,
  useAccessLink,
} from '../queries/viewers.js'
import { tokenHash } from '../subscribers/subscribe.js'
import { accessPage, anyPageLanguage, sendAccessPage } from './answers.js'
import { AUDIENCE_COOKIE, VIEWER_COOKIE, audienceOfToken, emailMayRead, signInDomains } from './readers.js'

/** A sign-in link works once, this long after it is sent. */
export const ACCESS_LINK_MINUTES = 15
/** One address is sent at most this many links to one page an hour (each is an e-mail someone typed an address for). */
export const ACCESS_LINKS_PER_ADDRESS_PER_HOUR = 5
/** A reader signed in by a link stays signed in this long (Statuspage's private pages keep a week too). */
export const VIEWER_SESSION_DAYS = 7
/** A browser that followed an audience's link reads as the audience this long (or until the link changes). */
export const AUDIENCE_COOKIE_DAYS = 30
/** Asking for links is limited per client address, tighter than the service's limit. */
const ACCESS_LIMIT = { max: 10, timeWindow: '1 minute' }

const tags = PUBLIC_TAGS
const AccessBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 320 }), locale: Type.Optional(LocaleTag) },
  { additionalProperties: false },
)
const Token = Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }) })
const Accepted = Type.Object({
  accepted: Type.Literal(true, {
    description: 'Always true, whether or not a page is here and the address may read it: the answer tells nothing',
  }),
})

const newToken = () => randomBytes(32).toString('base64url')
const e = (text: string) => escapeHtml(text)

export interface AccessRouteOptions {
  cache: PublicCache
  notifier: Notifier
  productUrl: string
}

/**
 * Signing in to a private page, or as an audience of any page, by e-mail (decision 0015, "Private
 * pages", "Audiences"): a reader asks for a link at `…/access`, the link's page (GET, a button: mail
 * scanners fetch links) signs them in by POST, which sets a cookie scoped to the page's root. An
 * audience's own link (`…/audience?token=`) sets a cookie of its token. Every answer reads the same
 * whether a page is there or not, so none of these routes tells an outsider that a private page exists.
 */
export const accessRoutes: FastifyPluginAsyncTypebox<AccessRouteOptions> = async (app, options) => {
  const db = app.database.db
  const { cache } = options
  await app.register(formbody)
  await app.register(cookie, { hook: false })

  interface Locator {
    page(request: FastifyRequest): Promise<PublicPage | null>
    root(request: FastifyRequest, page: PublicPage): string
  }
  const bySlug: Locator = {
    page: (request) => cache.bySlug((request.params as { slug: string }).slug),
    root: (_request, page) => publicUrlOf(options.productUrl, { slug: page.slug, customDomain: null }),
  }
  const byHost: Locator = {
    page: (request) => cache.byDomain(request.hostname.toLowerCase()),
    root: (_request, page) => publicUrlOf(options.productUrl, page),
  }
  /** The page at this address when a reader may sign in to it by e-mail: private, or with audiences that have domains. */
  const signInPage = async (locator: Locator, request: FastifyRequest) => {
    const page = await locator.page(request)
    return page && (page.visibility === 'private' || signInDomains(page).length > 0) ? page : null
  }
  const wantsHtml = (request: FastifyRequest) => request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ?? false
  const linkNotValid = (request: FastifyRequest, reply: FastifyReply) => {
    const t = anyPageLanguage(request)
    return sendAccessPage(reply, 404, accessPage(t, t.answers.linkNotValid, `<p>${e(t.access.linkNotValidText)}</p>`))
  }
  const cookieOptions = (root: string, maxAge?: number) => ({
    path: new URL(root).pathname,
    httpOnly: true,
    // Over plain HTTP (a local or test deployment) a Secure cookie would never come back.
    secure: root.startsWith('https:'),
    sameSite: 'lax' as const,
    ...(maxAge !== undefined ? { maxAge } : {}),
  })

  for (const [base, locator] of [
    ['/api/v1/statuspages/public/:slug', bySlug],
    ['', byHost],
  ] as const) {
    const hide = base === ''
    const params = hide ? { hide } : { params: SlugParams }

    app.post(
      `${base}/access`,
      {
        schema: {
          tags,
          summary: 'Ask for a link to sign in to a private page, or as an audience, by e-mail',
          description: `Sends a link that works once within ${ACCESS_LINK_MINUTES} minutes when the address's domain is one of a private page's viewerEmailDomains or one of the emailDomains of the page's audiences (at most ${ACCESS_LINKS_PER_ADDRESS_PER_HOUR} an hour per address). The answer is the same in every case.`,
          ...params,
          body: AccessBody,
          response: { 202: Accepted },
        },
        config: { ...PUBLIC, limit: ACCESS_LIMIT },
      },
      async (request, reply) => {
        const page = await signInPage(locator, request)
        const email = request.body.email.trim()
        if (page && emailMayRead(email, signInDomains(page))) {
          const sent = await db.transaction().execute(async (trx) => {
            const since = new Date(Date.now() - 3_600_000)
            if ((await accessLinksSentSince(trx, page.id, email, since)) >= ACCESS_LINKS_PER_ADDRESS_PER_HOUR) return false
            const token = newToken()
            await insertAccessLink(trx, {
              pageId: page.id,
              organizationId: page.organizationId,
              email,
              tokenHash: tokenHash(token),
              expiresAt: new Date(Date.now() + ACCESS_LINK_MINUTES * 60_000),
            })
            const t = messagesOf(chooseLocale(page.locales, request.body.locale, request.headers['accept-language']))
            const url = `${locator.root(request, page)}access/verify?token=${token}`
            await options.notifier.queueEmail(trx, {
              organizationId: page.organizationId,
              kind: 'statuspage.access_link',
              to: email,
              subject: t.access.emailSubject(page.name),
              text: t.access.emailBody(page.name, url, ACCESS_LINK_MINUTES).join('\n'),
            })
            return true
          })
          if (sent) options.notifier.wake()
        }
        if (wantsHtml(request)) {
          const t = anyPageLanguage(request)
          return sendAccessPage(reply, 202, accessPage(t, t.access.sentTitle, `<p>${e(t.access.sentText(ACCESS_LINK_MINUTES))}</p>`))
        }
        return reply.code(202).header('cache-control', 'no-store').send({ accepted: true })
      },
    )

    app.get(
      `${base}/access/verify`,
      {
        schema: {
          tags,
          summary: 'The page of a sign-in link: a button that signs in (POST), so a mail scanner fetching the link uses nothing',
          ...params,
          querystring: Token,
          produces: ['text/html'],
          response: { 200: HtmlPage, 404: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const page = await signInPage(locator, request)
        const link = page && (await pendingAccessLink(db, page.id, tokenHash(request.query.token)))
        if (!page || !link) return linkNotValid(request, reply)
        const t = messagesOf(chooseLocale(page.locales, undefined, request.headers['accept-language']))
        const action = `${locator.root(request, page)}access/verify?token=${encodeURIComponent(request.query.token)}`
        return sendAccessPage(
          reply,
          200,
          accessPage(
            t,
            t.access.continueTitle(page.name),
            `<form method="post" action="${e(action)}"><button type="submit">${e(t.access.continueButton)}</button></form>`,
          ),
        )
      },
    )

    app.post(
      `${base}/access/verify`,
      {
        schema: {
          tags,
          summary: 'Sign in with a link: uses it up, sets the reader’s cookie and redirects to the page',
          ...params,
          querystring: Token,
          produces: ['text/html'],
          response: { 303: Type.Null({ description: 'Location: the page' }), 404: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const page = await signInPage(locator, request)
        if (!page) return linkNotValid(request, reply)
        const root = locator.root(request, page)
        const token = newToken()
        const signedIn = await db.transaction().execute(async (trx) => {
          const link = await useAccessLink(trx, page.id, tokenHash(request.query.token))
          // The page's domains may have changed since the link was sent.
          if (!link || !emailMayRead(link.email, signInDomains(page))) return false
          const expiresAt = new Date(Date.now() + VIEWER_SESSION_DAYS * 86_400_000)
          await insertViewerSession(trx, {
            pageId: page.id,
            organizationId: page.organizationId,
            email: link.email,
            tokenHash: tokenHash(token),
            expiresAt,
          })
          return true
        })
        if (!signedIn) return linkNotValid(request, reply)
        return reply
          .setCookie(VIEWER_COOKIE, token, cookieOptions(root, VIEWER_SESSION_DAYS * 86_400))
          .header('cache-control', 'no-store')
          .redirect(root, 303)
      },
    )

    app.get(
      `${base}/audience`,
      {
        schema: {
          tags,
          summary: 'An audience’s link: the browser reads the page as the audience from then on (a cookie), and is sent to the page',
          ...params,
          querystring: Token,
          produces: ['text/html'],
          response: { 303: Type.Null({ description: 'Location: the page' }), 404: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const page = await locator.page(request)
        // A token that is not one of the page's reads as no page, as the page of a private slug does.
        if (!page || !audienceOfToken(page, request.query.token)) return linkNotValid(request, reply)
        const root = locator.root(request, page)
        return reply
          .setCookie(AUDIENCE_COOKIE, request.query.token, cookieOptions(root, AUDIENCE_COOKIE_DAYS * 86_400))
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer')
          .redirect(root, 303)
      },
    )

    app.post(
      `${base}/access/sign-out`,
      {
        schema: {
          tags,
          summary: 'Sign out of a private page or an audience (ends the session of the reader’s cookie, forgets an audience’s link)',
          ...params,
          produces: ['text/html'],
          response: { 200: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const page = await locator.page(request)
        const token = cookiesOf(request)[VIEWER_COOKIE]
        if (page && token) await deleteViewerSession(db, page.id, tokenHash(token))
        const t = anyPageLanguage(request)
        if (page) {
          reply.clearCookie(VIEWER_COOKIE, cookieOptions(locator.root(request, page)))
          reply.clearCookie(AUDIENCE_COOKIE, cookieOptions(locator.root(request, page)))
        }
        return sendAccessPage(reply, 200, accessPage(t, t.access.signedOutTitle, ''))
      },
    )
  }
}
