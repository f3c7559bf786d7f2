import type { FastifyReply, FastifyRequest } from 'fastify'
import escapeHtml from 'escape-html'
import { chooseLocale, messagesOf, supportedLocales } from '../i18n/locales.js'
import type { Messages } from '../i18n/messages.js'

const e = (text: string) => escapeHtml(text)

/**
 * The language of an answer that must not tell which page, if any, is behind an address: chosen
 * among every language the service speaks, never among the page's (they would tell it exists).
 */
export function anyPageLanguage(request: FastifyRequest): Messages {
  const asked = (request.query as { locale?: string } | undefined)?.locale
  return messagesOf(chooseLocale(supportedLocales, asked, request.headers['accept-language']))
}

/** A short page of the sign-in flow; `body` is HTML. Never indexed, never kept by a cache. */
export function accessPage(t: Messages, title: string, body: string): string {
  return `<!doctype html><html lang="${e(t.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${e(title)}</title></head><body><main style="max-width:560px;margin:40px auto;padding:0 16px;font-family:system-ui,sans-serif"><h1 style="font-size:1.4rem">${e(title)}</h1>${body}</main></body></html>`
}

/**
 * What a browser is shown at the root of a page it may not read, and at a slug or host no page
 * has: the same bytes, naming no page, with the form that asks for a sign-in link (its action is
 * relative to the page's root, so it is the same at every address too).
 */
export function notFoundPage(t: Messages): string {
  return accessPage(
    t,
    t.access.notFoundTitle,
    `<p>${e(t.access.notFoundText)}</p><p>${e(t.access.requestText)}</p><form method="post" action="access"><input type="hidden" name="locale" value="${e(t.language)}"><input type="email" name="email" required autocomplete="email" placeholder="you@example.com" aria-label="E-mail"> <button type="submit">${e(t.access.requestButton)}</button></form><p style="color:#5d6675;font-size:.9rem">${e(t.access.membersText)}</p>`,
  )
}

/** Answers an access page: HTML, `no-store`, `noindex`. */
export function sendAccessPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-robots-tag', 'noindex, nofollow')
    .send(html)
}
