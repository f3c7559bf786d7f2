import Parser from 'rss-parser'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

const smtp = await startSmtpServer(t)
const service = await startTestService(t, buildApp, {
  config: { notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 } },
})
const { app } = service
const { orgId, person } = await alertingOrganization(service, 'languages', { manager: { statuspages: 'manager' } })
const manager = person('manager')
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: manager.headers, ...(payload ? { payload } : {}) })
const publicGet = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })
const mailsTo = (address: string) => smtp.received.filter((mail) => mail.envelopeTo.includes(address))

const page = (
  await call('POST', `${base}/pages`, {
    name: 'Acme',
    slug: 'acme-i18n',
    published: true,
    timeZone: 'Europe/Berlin',
    locales: ['en', 'de', 'ja'],
  })
).json()
const pageBase = `${base}/pages/${page.id}`
const publicBase = '/api/v1/statuspages/public/acme-i18n'
const api = (await call('POST', `${pageBase}/components`, { name: 'API' })).json()

t.test('a page’s languages are set by its managers: known languages, at least one, the first the default', async (t) => {
  t.same(page.locales, ['en', 'de', 'ja'])
  const plain = (await call('POST', `${base}/pages`, { name: 'Plain', slug: 'plain-i18n', published: true })).json()
  t.same(plain.locales, ['en'], 'a page is in English unless told otherwise')
  for (const locales of [[], ['en', 'xx'], ['en', 'en'], ['en', 'de', 'fr', 'es', 'ja', 'en']]) {
    const refused = await call('PATCH', `${base}/pages/${plain.id}`, { locales })
    t.equal(refused.statusCode, 400, JSON.stringify(locales))
    t.match(refused.json().message, /locales/)
  }
  t.same((await call('GET', `${base}/pages/${plain.id}`)).json().locales, ['en'], 'a refused change changes nothing')

  // A page in one language speaks it to everyone, and says its answers do not vary by language.
  const english = await publicGet('/api/v1/statuspages/public/plain-i18n/', { 'accept-language': 'de' })
  t.match(english.body, /<html lang="en">/)
  t.match(english.body, /All Systems Operational/)
  t.equal(english.headers['content-language'], 'en')
  t.equal(english.headers.vary, 'Accept-Encoding')
  t.notMatch(english.body, /hreflang/, 'no other language is offered')
})

t.test('the page answers in the reader’s language: ?locale= first, then Accept-Language, then the page’s default', async (t) => {
  const asked = async (headers: Record<string, string>, query = '') => {
    const response = await publicGet(`${publicBase}/${query}`, headers)
    t.equal(response.statusCode, 200)
    return { lang: /<html lang="([^"]+)">/.exec(response.body)?.[1], response }
  }
  t.equal((await asked({})).lang, 'en', 'no preference: the default (the first of the page’s)')
  t.equal((await asked({ 'accept-language': 'de-CH, de;q=0.9, en;q=0.5' })).lang, 'de', 'a region reads as its language')
  t.equal((await asked({ 'accept-language': 'fr-FR, ja;q=0.3' })).lang, 'ja', 'the best language the page has')
  t.equal((await asked({ 'accept-language': 'fr, es' })).lang, 'en', 'none the page has: its default')
  t.equal((await asked({ 'accept-language': 'de;q=0, *;q=0.1' })).lang, 'en', 'a language refused with q=0 is not chosen')
  t.equal((await asked({ 'accept-language': 'de' }, '?locale=ja')).lang, 'ja', '?locale= outranks the header')
  t.equal((await asked({ 'accept-language': 'de' }, '?locale=fr')).lang, 'de', 'a ?locale= the page lacks falls back to the header')
  const bad = await publicGet(`${publicBase}/?locale=${encodeURIComponent('<script>')}`)
  t.equal(bad.statusCode, 400, 'a malformed language tag is a bad request')
  t.match(bad.json().message, /locale/)

  const { response: german } = await asked({ 'accept-language': 'de' })
  t.equal(german.headers['content-language'], 'de')
  t.equal(german.headers.vary, 'Accept-Encoding, Accept-Language', 'shared caches keep one copy per language')
  t.match(german.body, /Alle Systeme betriebsbereit/)
  t.match(german.body, /<h2>Komponenten<\/h2>/)
  t.match(german.body, /Betriebsbereit<\/span>/, 'a component’s status in German')
  t.match(german.body, /Zeiten in Europe\/Berlin/)
  t.match(german.body, /<input type="hidden" name="locale" value="de">/, 'the subscription form carries the language read in')
  t.match(german.body, /<link rel="alternate" hreflang="ja" href="[^"]+\/acme-i18n\/\?locale=ja">/)
  t.match(german.body, /<a href="[^"]+\?locale=en" hreflang="en" lang="en">English<\/a>/, 'the other languages are links')
  t.match(german.body, /href="[^"]+history\.atom\?locale=de"/, 'the feed it names is in its language')
  const japanese = (await asked({}, '?locale=ja')).response
  t.match(japanese.body, /すべてのシステムは正常に稼働しています/)
  t.match(japanese.body, /稼働率 100%/, 'the uptime legend in Japanese')

  // Each language is its own representation: its own ETag, and a 304 only for its own.
  const again = await publicGet(`${publicBase}/`, { 'accept-language': 'de', 'if-none-match': String(german.headers.etag) })
  t.equal(again.statusCode, 304)
  t.equal(again.headers['content-language'], 'de')
  const other = await publicGet(`${publicBase}/`, { 'accept-language': 'ja', 'if-none-match': String(german.headers.etag) })
  t.equal(other.statusCode, 200, 'the German ETag does not match the Japanese page')
  t.not(other.headers.etag, german.headers.etag)

  // The Statuspage v2 documents are read by programs: Statuspage's English in any language.
  const summary = await publicGet(`${publicBase}/api/v2/status.json`, { 'accept-language': 'de' })
  t.equal(summary.json().status.description, 'All Systems Operational')
  t.equal(summary.headers['content-language'], undefined)
})

t.test('incidents, the widget and the feeds are in the reader’s language', async (t) => {
  const incident = (
    await call('POST', `${pageBase}/incidents`, {
      name: 'API slow',
      body: 'Looking into it',
      impact: 'minor',
      components: [{ componentId: api.id, status: 'degraded_performance' }],
    })
  ).json()
  t.ok(incident.id)
  const german = (await publicGet(`${publicBase}/`, { 'accept-language': 'de' })).body
  t.match(german, /Geringfügige Störung/, 'the banner')
  t.match(german, /<h2>Aktuelle Störungen<\/h2>/)
  t.match(german, /<strong>Wird untersucht<\/strong> – Looking into it/, 'the update’s status in German, its text as written')
  t.match(german, /Eingeschränkte Leistung/)

  const widget = await publicGet(`${publicBase}/embed?locale=ja`)
  t.equal(widget.headers['content-language'], 'ja')
  t.match(widget.body, /軽微な障害が発生しています/)
  t.match(widget.body, /Acme ステータスページ →/)
  t.match(widget.body, /href="[^"]+\/acme-i18n\/\?locale=ja" target="_top"/, 'it opens the full page in its language')

  const parser = new Parser()
  const atomBody = (await publicGet(`${publicBase}/history.atom?locale=de`)).body
  const atom = await parser.parseString(atomBody)
  t.equal(atom.title, 'Acme: Statusverlauf')
  t.match(atom.items[0], { title: 'API slow', summary: 'Wird untersucht - Looking into it' })
  const rssBody = (await publicGet(`${publicBase}/history.rss`, { 'accept-language': 'ja' })).body
  t.match(rssBody, /<language>ja<\/language>/)
  const rss = await parser.parseString(rssBody)
  t.equal(rss.title, 'Acme ステータス履歴')
  t.match(rss.items[0]?.contentSnippet, /^調査中 - Looking into it/)
  const englishAtomBody = (await publicGet(`${publicBase}/history.atom`)).body
  t.equal((await parser.parseString(englishAtomBody)).title, 'Acme status history')
  const feedId = (xml: string) => /<feed [^>]*>\s*<id>([^<]+)<\/id>/.exec(xml)?.[1]
  t.match(feedId(englishAtomBody), /\/acme-i18n\/$/, 'the default language keeps the page’s feed id')
  t.match(feedId(atomBody), /\/acme-i18n\/\?locale=de$/, 'another language’s feed has an id of its own')
})

t.test('subscribers get their e-mails in the language they subscribed in', async (t) => {
  // The page's form, read in German, posts its hidden language.
  const form = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'en' },
    payload: 'email=leser%40example.com&locale=de',
  })
  t.equal(form.statusCode, 202)
  t.match(form.body, /<html lang="de">/)
  t.match(form.body, /Fast geschafft/)
  const confirmation = await until('the German confirmation', () => mailsTo('leser@example.com')[0])
  t.equal(confirmation.subject, 'Bestätigen Sie Ihr Abonnement der Status-Updates von Acme')
  const link = /https?:\/\/\S+\/subscribers\/confirm\?token=[\w-]+&locale=de/.exec(confirmation.text)?.[0]
  t.ok(link, 'the confirmation link names the language')
  const confirmed = await publicGet(new URL(link!).pathname + new URL(link!).search)
  t.equal(confirmed.statusCode, 200)
  t.match(confirmed.body, /Abonniert/)

  // Through the API, a reader's Accept-Language chooses; a language the page lacks is refused.
  const japanese = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    headers: { 'accept-language': 'ja-JP' },
    payload: { email: 'dokusha@example.com' },
  })
  t.equal(japanese.statusCode, 202)
  const refused = await app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload: { email: 'x@example.com', locale: 'fr' } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /locale this status page is in en, de, ja/)
  const added = await call('POST', `${pageBase}/subscribers`, { email: 'plain@example.com' })
  t.equal(added.json().locale, null, 'added by a manager without a language: the page’s default when sent')
  const listed = (await call('GET', `${pageBase}/subscribers`)).json().data as Array<{ email: string; locale: string | null }>
  t.same(Object.fromEntries(listed.map((row) => [row.email, row.locale])), {
    'leser@example.com': 'de',
    'dokusha@example.com': 'ja',
    'plain@example.com': null,
  })
  for (const address of ['dokusha@example.com', 'plain@example.com']) {
    const mail = await until(`the confirmation to ${address}`, () => mailsTo(address)[0])
    const url = new URL(/https?:\/\/\S+\/subscribers\/confirm\?\S+/.exec(mail.text)![0])
    t.equal((await publicGet(url.pathname + url.search)).statusCode, 200)
  }
  t.match(mailsTo('dokusha@example.com')[0]?.subject, /購読を確認してください/)

  const maintenance = (
    await call('POST', `${pageBase}/maintenances`, {
      name: 'Database upgrade',
      body: 'Planned',
      scheduledFor: '2030-01-10T09:00:00Z',
      scheduledUntil: '2030-01-10T10:00:00Z',
      componentIds: [api.id],
    })
  ).json()
  t.ok(maintenance.id, JSON.stringify(maintenance))
  const german = await until('the German notice', () => mailsTo('leser@example.com').find((mail) => /Database upgrade/.test(mail.subject)))
  t.equal(german.subject, '[Acme] Database upgrade: Geplant')
  t.match(
    german.text,
    /Zeitraum: 10\. Jan\. 2030, 10:00 MEZ bis 10\. Jan\. 2030, 11:00 MEZ/,
    'the window in the page’s time zone, in German',
  )
  t.match(german.text, /Statusseite: https?:\/\/\S+\/acme-i18n\//)
  const unsubscribe = /Abbestellen: (https?:\/\/\S+&locale=de)/.exec(german.text)?.[1]
  t.ok(unsubscribe, 'the unsubscribe link names the language')
  const japaneseNotice = await until('the Japanese notice', () =>
    mailsTo('dokusha@example.com').find((mail) => /Database upgrade/.test(mail.subject)),
  )
  t.equal(japaneseNotice.subject, '[Acme] Database upgrade: 予定')
  const plain = await until('the English notice', () => mailsTo('plain@example.com').find((mail) => /Database upgrade/.test(mail.subject)))
  t.match(plain.text, /Window: 10 Jan 2030, 10:00 CET to 10 Jan 2030, 11:00 CET/)

  const { pathname, search } = new URL(unsubscribe!)
  t.match((await publicGet(pathname + search)).body, /<button type="submit">Abbestellen<\/button>/)
  const gone = await app.inject({ method: 'POST', url: pathname + search })
  t.equal(gone.statusCode, 200)
  t.match(gone.body, /Sie erhalten keine Status-Updates von Acme mehr/)

  // Once the page drops a language, its subscribers read the page's default.
  t.equal((await call('PATCH', pageBase, { locales: ['de', 'en'] })).statusCode, 200)
  t.match((await publicGet(`${publicBase}/`)).body, /<html lang="de">/, 'the new default answers readers with no preference')
  await call('POST', `${pageBase}/maintenances/${maintenance.id}/updates`, { body: 'Started', status: 'in_progress' })
  const fallback = await until('the notice in the new default', () =>
    mailsTo('dokusha@example.com').find((mail) => /Database upgrade: Läuft/.test(mail.subject)),
  )
  t.match(fallback.text, /Statusseite:/)
})
