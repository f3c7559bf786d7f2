import t from 'tap'
import { dateTime, percentage } from '../src/i18n/format.js'
import { chooseLocale, localizedUrl, messagesOf, supportedLocales } from '../src/i18n/locales.js'

t.test('a reader’s language: ?locale=, then Accept-Language, then the page’s default', async (t) => {
  const page = ['en', 'de', 'ja']
  t.equal(chooseLocale(['de'], 'ja', 'ja'), 'de', 'a page in one language negotiates nothing')
  t.equal(chooseLocale(page, undefined, undefined), 'en')
  t.equal(chooseLocale(page, 'ja-JP', 'de'), 'ja')
  t.equal(chooseLocale(page, 'fr', 'de-AT;q=0.8, fr'), 'de')
  t.equal(chooseLocale(page, undefined, 'fr, es;q=0.5'), 'en')
  t.equal(chooseLocale(page, undefined, 'fr, es;q=0.5'), 'en', 'asked again: the same answer (remembered)')
  t.equal(chooseLocale(['ja', 'en'], undefined, '*'), 'ja', 'any language: the page’s default')
})

t.test('every language has its own words; an unknown one reads English', async (t) => {
  const english = messagesOf('en')
  for (const locale of supportedLocales.filter((locale) => locale !== 'en')) {
    const words = messagesOf(locale)
    t.equal(words.language, locale)
    for (const [status, text] of Object.entries(words.componentStatus))
      t.not(text, english.componentStatus[status as keyof typeof english.componentStatus], `${locale}: ${status}`)
    for (const [state, text] of Object.entries(words.overall)) t.not(text, english.overall[state as keyof typeof english.overall])
    t.not(words.page.title('Acme'), english.page.title('Acme'))
  }
  t.equal(messagesOf('xx'), english)
})

t.test('numbers and dates as each language writes them', async (t) => {
  t.equal(percentage(messagesOf('en'), 99.95), '99.95%')
  t.equal(percentage(messagesOf('fr'), 99.95), '99,95\u00a0%')
  const at = new Date('2026-11-24T08:30:00Z')
  t.equal(dateTime(messagesOf('en'), at, 'Europe/Berlin'), '24 Nov 2026, 09:30 CET')
  t.equal(dateTime(messagesOf('ja'), at, 'Asia/Tokyo'), '2026年11月24日 17:30 JST')
  t.equal(localizedUrl(['en'], 'https://s/', 'en'), 'https://s/', 'one language: no ?locale=')
  t.equal(localizedUrl(['en', 'de'], 'https://s/', 'en'), 'https://s/?locale=en')
})

/** Every message of a catalog, by its path: words as they are, and what each function writes of its arguments. */
function* messagesIn(value: unknown, path: string): Generator<[string, unknown]> {
  if (typeof value === 'function' || typeof value === 'string') yield [path, value]
  else if (value && typeof value === 'object')
    for (const [key, child] of Object.entries(value)) yield* messagesIn(child, path ? `${path}.${key}` : key)
}

t.test('every message of every language is written, and writes each of its arguments', async (t) => {
  for (const locale of supportedLocales) {
    for (const [path, message] of messagesIn(messagesOf(locale), '')) {
      if (typeof message === 'string') {
        t.ok(message.trim().length > 0, `${locale} ${path}`)
        continue
      }
      const write = message as (...values: unknown[]) => string | string[]
      // Arguments that could not appear by chance: a page's name, a URL, a count.
      const values = Array.from({ length: write.length }, (_, index) => (path === 'widget.more' ? 7 : `«arg${index}»`))
      const written = [write(...values)].flat().join('\n')
      for (const value of values) t.ok(written.includes(String(value)), `${locale} ${path} writes ${String(value)}`)
    }
  }
})
