import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type, type TSchema } from 'typebox'
import escapeHtml from 'escape-html'
import type { OutboundConfig } from '@svc/config'
import { NotFoundError, PUBLIC_CORS_HEADERS, invalidField } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { LocaleTag, chooseLocale, messagesOf } from '../i18n/locales.js'
import type { Messages } from '../i18n/messages.js'
import { publicUrlOf } from '../pages/public-url.js'
import { anyPageLanguage, notFoundPage, sendAccessPage } from '../private/answers.js'
import { NO_AUDIENCE, createReaderCheck } from '../private/readers.js'
import { assetByHash } from '../queries/assets.js'
import { publicComponents, publicRecords } from '../queries/public.js'
import { confirmSmsSubscriber, confirmSubscriber, subscriberOfUnsubscribeToken, unsubscribe } from '../queries/subscribers.js'
import {
  PhoneNumber,
  SMS_CODE,
  SUBSCRIBER_KINDS,
  SubscribeBody,
  confirmLinks,
  smsCodeHash,
  subscribe,
  tokenHash,
} from '../subscribers/subscribe.js'
import { renderBadge } from './badge.js'
import type { PublicCache, PublicPage, RenderedDocument } from './cache.js'
import { jsonDocuments, renderJson } from './documents.js'
import { renderFeed } from './feeds.js'
import { htmlCsp, renderHtml } from './html.js'
import { v2DocumentSchemas } from './v2-schemas.js'
import { v2Status } from './v2.js'
import { renderWidget, widgetCsp } from './widget.js'

export const PUBLIC_BASE = '/api/v1/statuspages/public/:slug'
/** Browsers and proxies keep a public document this long, then revalidate it with its ETag. */
export const PUBLIC_MAX_AGE_SECONDS = 30
export const PUBLIC_TAGS = ['statuspages-public']
const tags = PUBLIC_TAGS
/** Every route here: no credentials, and the CORS headers of the surface's own hook (below). */
export const PUBLIC = { public: true, cors: false } as const
const CACHING = { 'cache-control': `public, max-age=${PUBLIC_MAX_AGE_SECONDS}`, vary: 'Accept-Encoding' }
/**
 * What everyone reads of a page with audiences: still public, but a reader with a cookie or a token
 * reads more (decision 0015, "Audiences"), so a shared cache keeps it apart from their answers.
 */
const AUDIENCE_CACHING = { ...CACHING, vary: 'Accept-Encoding, Cookie, Authorization' }
/**
 * A private page's documents (decision 0015, "Private pages"): kept by the reader's browser only,
 * revalidated each time (the reader may have signed out), their answer depending on the credentials,
 * never indexed, and not readable by other sites (no CORS, same-site resource policy).
 */
const PRIVATE_CACHING = {
  'cache-control': 'private, no-cache',
  vary: 'Accept-Encoding, Cookie, Authorization',
  'x-robots-tag': 'noindex, nofollow',
  'cross-origin-resource-policy': 'same-site',
}
const CORS_HEADERS = Object.keys(PUBLIC_CORS_HEADERS)
/**
 * What any site may do with these answers: read them (CORS) and embed them (an `<img>` of the
 * badge, a feed reader's fetch, the widget in an `<iframe>`): the service's own default,
 * `Cross-Origin-Resource-Policy: same-site`, would make a browser refuse them on another site.
 */
const PUBLIC_HEADERS = Object.freeze({ ...PUBLIC_CORS_HEADERS, 'cross-origin-resource-policy': 'cross-origin' })

export interface PublicRouteOptions {
  cache: PublicCache
  notifier: Notifier
  outbound: OutboundConfig
  /**
   * The product API's public URL. Links in documents are built from it (or from the page's
   * custom domain), never from a request's Host header: a cached document must not carry (or be
   * multiplied by) whatever host a client sent.
   */
  productUrl: string
}

interface Located {
  page: PublicPage
  /** The page's public root as this request reached it, ending in `/`. */
  root: string
  /** The audiences the reader reads as (private/readers.ts); empty for most. */
  reader: readonly string[]
}

export const SlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) })
export const HtmlPage = Type.String({ description: 'An HTML page' })
const AudienceToken = Type.String({
  minLength: 10,
  maxLength: 100,
  description: 'An audience’s link token: the answer is what that audience reads (for feed readers and API clients, which keep no cookie)',
})
const AudienceQuery = Type.Object({ audience: Type.Optional(AudienceToken) })
const LocaleQuery = Type.Object({ locale: Type.Optional(LocaleTag), audience: Type.Optional(AudienceToken) })
const Token = Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }), locale: Type.Optional(LocaleTag) })
const SmsCode = Type.Object(
  { phone: PhoneNumber, code: Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits texted to the number' }) },
  { additionalProperties: false },
)
const Subscribed = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.Enum(SUBSCRIBER_KINDS),
  confirmed: Type.Boolean({ description: 'false: a confirmation link was e-mailed; nothing is sent before it is followed' }),
  secret: Type.Optional(Type.String({ description: 'Webhook subscribers: the Standard Webhooks signing secret, shown once' })),
  unsubscribeUrl: Type.Optional(Type.String()),
})

/** A person's browser gets a page (the form on the status page posts form-encoded), not JSON. */
function htmlAnswer(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html)
}

/** Whether an Accept-Encoding header takes gzip (and does not refuse it with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  return header.split(',').some((part) => {
    const [coding = '', ...parameters] = part.trim().toLowerCase().split(';')
    if (coding !== 'gzip' && coding !== '*') return false
    const q = parameters.map((parameter) => parameter.trim()).find((parameter) => parameter.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}

/**
 * `acceptsGzip` of the last Accept-Encoding seen: clients send the same few values (a browser,
 * an HTTP library), so most requests compare one string instead of parsing the header again.
 */
function gzipWantedBy(): (header: string | undefined) => boolean {
  let last: string | undefined
  let wanted = false
  return (header) => {
    if (header !== last) {
      last = header
      wanted = acceptsGzip(header)
    }
    return wanted
  }
}

/** Whether If-None-Match names this ETag (weak comparison, as RFC 9110 13.1.2 asks for GET). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}

const minute = (now: Date) => now.toISOString().slice(0, 16)

/** The language to answer this reader in, among the page's (decision 0027). */
function localeOf(request: FastifyRequest, page: { locales: readonly string[] }): string {
  return chooseLocale(page.locales, (request.query as { locale?: string } | undefined)?.locale, request.headers['accept-language'])
}

/**
 * The headers of a document in one language: its language, and, when the page has others, that
 * the answer depends on Accept-Language (shared caches keep one copy per language asked for).
 */
function languageHeaders(headers: Record<string, string>, page: PublicPage, locale: string): Record<string, string> {
  return {
    ...headers,
    'content-language': locale,
    ...(page.locales.length > 1 ? { vary: `${headers.vary ?? 'Accept-Encoding'}, Accept-Language` } : {}),
  }
}

/** A short page answering a subscription link, in the language of `t`; `words` is HTML. */
function message(t: Messages, title: string, words: string): string {
  return `<!doctype html><html lang="${escapeHtml(t.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title></head><body><h1 style="font-size:1.4rem">${escapeHtml(title)}</h1><p>${words}</p></body></html>`
}

/**
 * The public status pages (issue 15), without credentials: at `/api/v1/statuspages/public/<slug>/`
 * and at the root of a page's custom domain (the Host header chooses the page). Every document is
 * rendered once per page revision (public/cache.ts), answered with `Cache-Control`, an `ETag` (304
 * for `If-None-Match`) and `Access-Control-Allow-Origin: *`. Unpublished pages are 404. The
 * service's per-address limit applies.
 */
export const publicRoutes: FastifyPluginAsyncTypebox<PublicRouteOptions> = async (app, options) => {
  const db = app.database.db
  const { cache } = options
  await app.register(formbody)
  // Any page may read and embed these routes, without credentials (what `publicCors` answers, fixed).
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(PUBLIC_HEADERS)
    done()
  })

  const found = <T>(value: T | null): T => {
    if (!value) throw new NotFoundError('status page')
    return value
  }
  /** How a request names its page: by the slug in its path, or by its Host (a custom domain). */
  interface Locator {
    /** Part of a document's name in the cache: its links start from the page's root as this locator reaches it. */
    kind: 'slug' | 'host'
    /** What the cache answers without the database (`undefined`: it must ask). */
    remembered(request: FastifyRequest): PublicPage | null | undefined
    lookup(request: FastifyRequest): Promise<PublicPage | null>
    at(page: PublicPage, reader: readonly string[]): Located
  }
  const slugOf = (request: FastifyRequest) => (request.params as { slug: string }).slug
  const hostOf = (request: FastifyRequest) => request.hostname.toLowerCase()
  const bySlugLocator: Locator = {
    kind: 'slug',
    remembered: (request) => cache.rememberedSlug(slugOf(request)),
    lookup: (request) => cache.bySlug(slugOf(request)),
    at: (page, reader) => ({ page, reader, root: publicUrlOf(options.productUrl, { slug: page.slug, customDomain: null }) }),
  }
  const byHostLocator: Locator = {
    kind: 'host',
    remembered: (request) => cache.rememberedDomain(hostOf(request)),
    lookup: (request) => cache.byDomain(hostOf(request)),
    at: (page, reader) => ({ page, reader, root: publicUrlOf(options.productUrl, page) }),
  }
  const readerOf = createReaderCheck(app)
  const locate = (locator: Locator) => async (request: FastifyRequest) => {
    const page = found(await locator.lookup(request))
    // A private page this reader may not read is not found.
    return locator.at(page, found(await readerOf(request, page)))
  }
  /**
   * The page at this address for a link that carries its own token (confirm, unsubscribe): any
   * reader may follow one, but on a private page a token that is not the page's is answered as
   * if no page were there.
   */
  const locateForToken = (locator: Locator) => async (request: FastifyRequest) =>
    locator.at(found(await locator.lookup(request)), NO_AUDIENCE)
  const bySlug = locate(bySlugLocator)
  const byHost = locate(byHostLocator)
  const bySlugForToken = locateForToken(bySlugLocator)
  const byHostForToken = locateForToken(byHostLocator)

  const gzipWanted = gzipWantedBy()
  function sendRendered(request: FastifyRequest, reply: FastifyReply, document: RenderedDocument): FastifyReply {
    // The gzipped bytes were made once with the document; nothing is compressed per request.
    const representation = gzipWanted(request.headers['accept-encoding']) ? document.gzip : document.identity
    if (matches(request.headers['if-none-match'], representation.etag)) return reply.headers(representation.notModified).code(304).send()
    return reply.headers(representation.headers).send(representation.bytes)
  }

  /**
   * The handler of one document at one locator: answers from memory when the page is remembered
   * and the document rendered at its revision (most requests: no promise is waited on), else
   * asks the database, renders the document and keeps it first.
   */
  function documentHandler(locator: Locator, document: PublicDocument) {
    const name = `${document.name}|${locator.kind}`
    const { period } = document
    const answer = (
      request: FastifyRequest,
      reply: FastifyReply,
      page: PublicPage,
      reader: readonly string[],
    ): Promise<FastifyReply> | undefined => {
      // What a private page or an audience reads is the reader's own (decision 0015, "Audiences").
      const personal = page.visibility === 'private' || reader.length > 0
      // Merged only when the document is rendered: a request answered from memory reuses them.
      const headersOf = () => ({
        ...(personal ? PRIVATE_CACHING : page.audiences.length > 0 ? AUDIENCE_CACHING : CACHING),
        ...document.headersOf?.(page),
      })
      if (personal) for (const header of CORS_HEADERS) reply.removeHeader(header)
      // The service forbids framing everywhere (X-Frame-Options); a frameable document says where instead (its CSP).
      if (document.frameable) reply.removeHeader('x-frame-options')
      const now = new Date()
      // A document in words is kept once per language it was asked in.
      const locale = document.localized ? localeOf(request, page) : undefined
      const named = `${locale ? `${name}|${locale}` : name}${reader.length > 0 ? `|a:${reader.join(',')}` : ''}`
      const key = period ? `${named}@${period(now)}` : named
      const rendered = cache.renderedOf(page, key)
      if (rendered) {
        sendRendered(request, reply, rendered)
        return undefined
      }
      const located = locator.at(page, reader)
      const language = locale ?? page.locales[0] ?? 'en'
      return cache
        .document(page, key, async () => ({
          body: await document.render(located, now, language),
          contentType: document.contentType,
          headers: locale ? languageHeaders(headersOf(), page, locale) : headersOf(),
        }))
        .then((fresh) => sendRendered(request, reply, fresh))
    }
    /**
     * A page nobody may read here (none at this address, or private to this reader): 404, the
     * same for both. A browser asking for the page itself gets the form that asks for a sign-in link.
     */
    const refuse = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      if (document.name !== 'html') throw new NotFoundError('status page')
      for (const header of CORS_HEADERS) reply.removeHeader(header)
      return sendAccessPage(reply, 404, notFoundPage(anyPageLanguage(request)))
    }
    const serve = (request: FastifyRequest, reply: FastifyReply, page: PublicPage | null) => {
      if (!page) return refuse(request, reply)
      // Most pages: public and read alike by everyone, answered without waiting on a promise.
      if (page.visibility === 'public' && page.audiences.length === 0) return answer(request, reply, page, NO_AUDIENCE)
      return readerOf(request, page).then((reader) => (reader ? (answer(request, reply, page, reader) ?? reply) : refuse(request, reply)))
    }
    return (request: FastifyRequest, reply: FastifyReply) => {
      const page = locator.remembered(request)
      if (page === undefined) return locator.lookup(request).then((fresh) => serve(request, reply, fresh) ?? reply)
      return serve(request, reply, page)
    }
  }

  interface PublicDocument {
    path: string
    summary: string
    /** What a 200 answers, for the API reference. */
    response: { produces: string; schema: TSchema }
    contentType: string
    /** Its name in the cache. */
    name: string
    /** A document that depends on the time: the period it is rendered for, added to its name. */
    period?: (now: Date) => string
    /** `locale`: one of the page's languages (its default for a document not `localized`). */
    render(located: Located, now: Date, locale: string): Promise<string>
    /**
     * Written in words for people (the page, the widget, the feeds): rendered in the reader's
     * language, chosen by `?locale=` or Accept-Language among the page's. The v2 documents and
     * the badge keep Statuspage's English, as machine-read values.
     */
    localized?: boolean
    /** Headers of its own for a page (the HTML page's policy, which names its theme's hash). */
    headersOf?: (page: PublicPage) => Record<string, string>
    /** Made to be framed by other sites (the widget): its CSP's `frame-ancestors` decides, not X-Frame-Options. */
    frameable?: boolean
  }

  const documents: PublicDocument[] = [
    ...jsonDocuments.map((document): PublicDocument => ({
      path: `/api/v2/${document}.json`,
      summary: `Statuspage API v2: ${document}.json`,
      response: { produces: 'application/json', schema: v2DocumentSchemas[document]! },
      contentType: 'application/json; charset=utf-8',
      name: document,
      ...(document === 'uptime' ? { period: minute } : {}),
      render: async (located, now) => JSON.stringify(await renderJson(db, located.page, located.reader, document, located.root, now)),
    })),
    {
      path: '/',
      summary: 'The status page (HTML, no script needed)',
      response: { produces: 'text/html', schema: Type.String({ description: 'An HTML page' }) },
      contentType: 'text/html; charset=utf-8',
      name: 'html',
      period: minute,
      localized: true,
      render: (located, now, locale) => renderHtml(db, located.page, located.reader, { root: located.root, locale }, now),
      headersOf: (page) => ({ 'content-security-policy': htmlCsp(page) }),
    },
    {
      path: '/embed',
      summary: 'A small view of the page’s status, to put in an <iframe> on another site (HTML, no script)',
      response: { produces: 'text/html', schema: Type.String({ description: 'An HTML page made to be framed' }) },
      contentType: 'text/html; charset=utf-8',
      name: 'widget',
      localized: true,
      render: (located, _now, locale) => renderWidget(db, located.page, located.reader, located.root, locale),
      headersOf: (page) => ({ 'content-security-policy': widgetCsp(page) }),
      frameable: true,
    },
    {
      path: '/history.atom',
      summary: 'Incident history as an Atom feed',
      response: { produces: 'application/atom+xml', schema: Type.String({ description: 'Atom 1.0' }) },
      contentType: 'application/atom+xml; charset=utf-8',
      name: 'atom',
      localized: true,
      render: (located, _now, locale) => renderFeed(db, located.page, located.reader, located.root, 'atom', locale),
    },
    {
      path: '/history.rss',
      summary: 'Incident history as an RSS feed',
      response: { produces: 'application/rss+xml', schema: Type.String({ description: 'RSS 2.0' }) },
      contentType: 'application/rss+xml; charset=utf-8',
      name: 'rss',
      localized: true,
      render: (located, _now, locale) => renderFeed(db, located.page, located.reader, located.root, 'rss', locale),
    },
    {
      path: '/badge.svg',
      summary: 'The page’s status as an SVG badge',
      response: { produces: 'image/svg+xml', schema: Type.String({ description: 'An SVG image' }) },
      contentType: 'image/svg+xml; charset=utf-8',
      name: 'badge',
      render: async (located) => {
        const [content, unresolved] = await Promise.all([
          publicComponents(db, located.page.id, located.reader),
          publicRecords(db, located.page.id, 'incident', { which: 'unresolved' }, located.reader),
        ])
        return renderBadge(located.page.name, v2Status(located.page, content, unresolved), located.page.theme['--header-background'])
      },
    },
  ]

  for (const document of documents) {
    app.get(
      `${PUBLIC_BASE}${document.path}`,
      {
        schema: {
          tags,
          summary: document.summary,
          params: SlugParams,
          querystring: document.localized ? LocaleQuery : AudienceQuery,
          produces: [document.response.produces],
          response: { 200: document.response.schema, 304: Type.Null({ description: 'Not modified (If-None-Match)' }) },
        },
        config: PUBLIC,
      },
      documentHandler(bySlugLocator, document),
    )
    app.get(
      document.path,
      {
        schema: {
          tags,
          summary: `${document.summary}, at a page’s custom domain`,
          hide: true,
          querystring: document.localized ? LocaleQuery : AudienceQuery,
        },
        config: PUBLIC,
      },
      documentHandler(byHostLocator, document),
    )
  }
  // A page's logo and favicon, named by their hash: a new upload is a new name, so each can be kept for ever.
  const AssetFile = Type.String({ pattern: '^[0-9a-f]{32}\\.(?:png|jpg|webp|ico)$', description: 'The asset’s hash and extension' })
  for (const [path, locateAsset, hide] of [
    [`${PUBLIC_BASE}/assets/:file`, bySlug, false],
    ['/assets/:file', byHost, true],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          tags,
          summary: hide ? 'A page’s logo or favicon, at its custom domain' : 'The page’s logo or favicon (decision 0015, "Branding")',
          hide,
          params: hide ? Type.Object({ file: AssetFile }) : Type.Object({ slug: SlugParams.properties.slug, file: AssetFile }),
          produces: ['image/png', 'image/jpeg', 'image/webp', 'image/x-icon'],
          response: { 200: Type.Unsafe<Buffer>({ description: 'The image' }) },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const { page } = await locateAsset(request)
        const asset = await assetByHash(db, page.id, (request.params as { file: string }).file.slice(0, 32))
        if (!asset) throw new NotFoundError('asset')
        if (page.visibility === 'private') {
          for (const header of CORS_HEADERS) reply.removeHeader(header)
          reply.header('cross-origin-resource-policy', 'same-site').header('x-robots-tag', 'noindex, nofollow')
        }
        return reply
          .header('cache-control', `${page.visibility === 'private' ? 'private' : 'public'}, max-age=31536000, immutable`)
          .type(asset.contentType)
          .send(asset.bytes)
      },
    )
  }

  // The page without its trailing slash: the links on it are relative to its root.
  app.get(
    PUBLIC_BASE,
    {
      schema: {
        // The derived id would be that of the page itself (`…/:slug/`).
        operationId: 'redirectStatuspagesPublicBySlug',
        tags,
        summary: 'The status page (redirects to its root)',
        params: SlugParams,
        response: { 301: Type.Null({ description: 'Location: the page’s root' }) },
      },
      config: PUBLIC,
    },
    async (request, reply) => {
      const located = await bySlug(request)
      return reply.redirect(located.root, 301)
    },
  )

  const context = (located: Located) => ({
    notifier: options.notifier,
    outbound: options.outbound,
    confirmUrl: confirmLinks(located.root, located.page.locales),
  })
  /** A subscription link's page, in the language its link names (the subscriber's) or the reader's. */
  const answerIn = (request: FastifyRequest, located: Located, asked?: string): Messages =>
    messagesOf(
      chooseLocale(located.page.locales, asked ?? (request.query as { locale?: string }).locale, request.headers['accept-language']),
    )
  const wantsHtml = (request: FastifyRequest) => request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ?? false

  for (const [base, locate, locateForToken] of [
    [PUBLIC_BASE, bySlug, bySlugForToken],
    ['', byHost, byHostForToken],
  ] as const) {
    const hide = base === ''
    app.post(
      `${base}/subscribers`,
      {
        schema: {
          tags,
          summary: 'Subscribe by e-mail (a confirmation link is sent), or by webhook, Slack or Teams (confirmed at once)',
          ...(hide ? { hide } : { params: SlugParams }),
          body: SubscribeBody,
          response: { 201: Subscribed, 202: Subscribed },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const located = await locate(request)
        const result = await db.transaction().execute((trx) =>
          subscribe(
            trx,
            {
              ...context(located),
              publicFrom: request.ip,
              readerLanguages: request.headers['accept-language'],
              audienceIds: located.reader,
            },
            located.page,
            request.body,
          ),
        )
        if (result.kind === 'email' || result.kind === 'sms') options.notifier.wake()
        if (wantsHtml(request)) {
          const t = answerIn(request, located, request.body.locale)
          return htmlAnswer(reply, 202, message(t, t.answers.almostThere, escapeHtml(t.answers.almostThereText(located.page.name))))
        }
        // Whether an address or number was confirmed already is not told: the answer is the same.
        const confirms = result.kind === 'email' || result.kind === 'sms'
        return reply.code(confirms ? 202 : 201).send(confirms ? { id: result.id, kind: result.kind, confirmed: false } : result)
      },
    )

    app.post(
      `${base}/subscribers/confirm-sms`,
      {
        schema: {
          tags,
          summary: 'Confirm an SMS subscription with the code texted to the number (five wrong codes void it)',
          ...(hide ? { hide } : { params: SlugParams }),
          body: SmsCode,
          response: { 200: Type.Object({ confirmed: Type.Literal(true) }) },
        },
        config: PUBLIC,
      },
      async (request) => {
        const located = await locate(request)
        const { phone, code } = request.body
        // A wrong code is counted even though the answer is an error, so the count commits first.
        const outcome = await db
          .transaction()
          .execute((trx) => confirmSmsSubscriber(trx, located.page.id, phone, smsCodeHash(located.page.id, phone, code), SMS_CODE))
        if (outcome === 'spent') throw invalidField('code', 'too many wrong codes: subscribe again for a new one')
        if (outcome === 'wrong') throw invalidField('code', 'is wrong or has expired')
        return { confirmed: true as const }
      },
    )

    app.get(
      `${base}/subscribers/confirm`,
      {
        schema: {
          tags,
          summary: 'Confirm an e-mail subscription (the link in the confirmation message)',
          ...(hide ? { hide } : { params: SlugParams }),
          querystring: Token,
          produces: ['text/html'],
          response: { 200: HtmlPage, 404: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const located = await locateForToken(request)
        // Another page's token (through this page's address) confirms nothing.
        const ok = (await confirmSubscriber(db, located.page.id, tokenHash(request.query.token))) !== undefined
        if (!ok && located.page.visibility === 'private') throw new NotFoundError('status page')
        const t = answerIn(request, located)
        return reply
          .code(ok ? 200 : 404)
          .type('text/html; charset=utf-8')
          .send(
            ok
              ? message(t, t.answers.subscribed, escapeHtml(t.answers.subscribedText(located.page.name)))
              : message(t, t.answers.linkNotValid, escapeHtml(t.answers.linkNotValidText)),
          )
      },
    )

    // A link in a message must not unsubscribe by being fetched (mail scanners fetch links):
    // GET shows a button, POST unsubscribes (RFC 8058's one-click POST works too).
    app.get(
      `${base}/subscribers/unsubscribe`,
      {
        schema: {
          tags,
          summary: 'The unsubscribe page (a button that POSTs)',
          ...(hide ? { hide } : { params: SlugParams }),
          querystring: Token,
          produces: ['text/html'],
          response: { 200: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const located = await locateForToken(request)
        if (located.page.visibility === 'private' && !(await subscriberOfUnsubscribeToken(db, located.page.id, request.query.token)))
          throw new NotFoundError('status page')
        const t = answerIn(request, located)
        const language = request.query.locale ? `&locale=${encodeURIComponent(request.query.locale)}` : ''
        const action = `${located.root}subscribers/unsubscribe?token=${encodeURIComponent(request.query.token)}${language}`
        return reply
          .type('text/html; charset=utf-8')
          .send(
            message(
              t,
              t.answers.unsubscribeTitle(located.page.name),
              `<form method="post" action="${escapeHtml(action)}"><button type="submit">${escapeHtml(t.answers.unsubscribeButton)}</button></form>`,
            ),
          )
      },
    )
    app.post(
      `${base}/subscribers/unsubscribe`,
      {
        schema: {
          tags,
          summary: 'Unsubscribe (e-mail or webhook) with the token of any message',
          ...(hide ? { hide } : { params: SlugParams }),
          querystring: Token,
          produces: ['text/html'],
          response: { 200: HtmlPage },
        },
        config: PUBLIC,
      },
      async (request, reply) => {
        const located = await locateForToken(request)
        // On a private page an unknown token must read as no page at all.
        const unknown = () => new NotFoundError(located.page.visibility === 'private' ? 'status page' : 'subscription')
        const removed = await db.transaction().execute(async (trx) => {
          const row = await unsubscribe(trx, request.query.token)
          // Another page's token (through this page's address) removes nothing.
          if (row && row.pageId !== located.page.id) throw unknown()
          return row
        })
        if (!removed) throw unknown()
        const t = answerIn(request, located)
        return reply
          .type('text/html; charset=utf-8')
          .send(message(t, t.answers.unsubscribed, escapeHtml(t.answers.unsubscribedText(located.page.name))))
      },
    )
  }
}
