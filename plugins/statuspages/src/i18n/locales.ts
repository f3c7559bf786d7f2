import Negotiator from 'negotiator'
import { Type } from 'typebox'
import { de } from './de.js'
import { en } from './en.js'
import { es } from './es.js'
import { fr } from './fr.js'
import { ja } from './ja.js'
import type { Messages } from './messages.js'

/** The languages a page may be read in (decision 0027). */
export const supportedLocales = ['en', 'de', 'fr', 'es', 'ja'] as const
export type Locale = (typeof supportedLocales)[number]

const catalogs: Record<Locale, Messages> = { en, de, fr, es, ja }

/** A new page's languages. */
export const DEFAULT_LOCALES: readonly Locale[] = ['en']

export const isLocale = (value: string): value is Locale => value in catalogs

/** The messages of a language; English for one no catalog has (a stored value from a later version). */
export const messagesOf = (locale: string): Messages => (isLocale(locale) ? catalogs[locale] : en)

/** A page's languages as its managers set them: the first is its default. */
export const PageLocales = Type.Array(Type.Enum(supportedLocales), {
  minItems: 1,
  maxItems: supportedLocales.length,
  uniqueItems: true,
  description:
    'The languages the public page, widget, feeds and subscribers’ e-mails are offered in; the first is the default, for readers whose languages match none',
})

/** A BCP 47 language tag, as `?locale=` and a subscription take it: `de`, `de-CH`, `ja-JP`. */
export const LocaleTag = Type.String({
  maxLength: 35,
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$',
  description: 'A language tag (de, de-CH, ja); a region reads as its language, a language the page is not in as the page’s default',
})

/** The best of the page's languages (`enabled`) for an Accept-Language value or a language tag; undefined for none. */
export function matchLocale(enabled: readonly string[], wanted: string): string | undefined {
  return new Negotiator({ headers: { 'accept-language': wanted } }).language(enabled)
}

/** The last negotiation: readers of one page send a few Accept-Language values over and over. */
let last: { enabled: readonly string[]; asked: string | undefined; header: string | undefined; locale: string } | undefined

/**
 * The language to answer a reader in, among the page's (`enabled`, default first): the language
 * asked for by `?locale=` when the page is in it (a region, `de-CH`, reads as `de`), else the
 * best of the reader's Accept-Language (RFC 9110 12.5.4, by `negotiator`, as Express does), else
 * the page's default. A page in one language negotiates nothing.
 */
export function chooseLocale(enabled: readonly string[], asked: string | undefined, header: string | undefined): string {
  const fallback = enabled[0] ?? 'en'
  if (enabled.length === 1) return fallback
  if (last && last.enabled === enabled && last.asked === asked && last.header === header) return last.locale
  const locale = (asked && matchLocale(enabled, asked)) || (header && matchLocale(enabled, header)) || fallback
  last = { enabled, asked, header, locale }
  return locale
}

/**
 * A link to a page's document in one language: `?locale=` names it whenever the page has more
 * than one, so following a language link is not undone by the reader's Accept-Language.
 */
export function localizedUrl(locales: readonly string[], url: string, locale: string): string {
  return locales.length > 1 ? `${url}?locale=${locale}` : url
}
