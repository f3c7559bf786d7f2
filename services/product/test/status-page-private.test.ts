import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startDnsServer, startSmtpServer, startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Private status pages (issue 58; decision 0015, "Private pages"): members of the organization
// and people of allowed e-mail domains read them; to anyone else each of their paths answers
// exactly what the same path answers where no page is.
const smtp = await startSmtpServer(t)
const dns = await startDnsServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    dnsServers: [dns.address],
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 },
  },
})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'hidden', {
  manager: { statuspages: 'manager' },
  member: null,
})
const [manager, member, stranger] = ['manager', 'member', 'stranger'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })

const DOMAIN = 'status.hidden.example'
const created = await call(manager!, 'POST', `${base}/pages`, {
  name: 'Secret Sauce',
  slug: 'secret-sauce',
  published: true,
  customDomain: DOMAIN,
  visibility: 'private',
  viewerEmailDomains: ['Customer.example'],
})
const page = created.json()
const pageBase = `${base}/pages/${page.id}`
const api = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'Ledger API' })).json()
await call(manager!, 'POST', `${pageBase}/incidents`, {
  name: 'Ledger delays',
  body: 'Postings reach the ledger late.',
  impact: 'minor',
  components: [{ componentId: api.id, status: 'degraded_performance' }],
})
dns.txt.set(`_statuspage-verification.${DOMAIN}`, [page.customDomainVerification.recordValue])
await call(manager!, 'POST', `${pageBase}/custom-domain/verify`)

const slugRoot = '/api/v1/statuspages/public/secret-sauce'
const noneRoot = '/api/v1/statuspages/public/no-such-page'
const documents = [
  '/',
  '/api/v2/summary.json',
  '/api/v2/status.json',
  '/api/v2/components.json',
  '/api/v2/incidents.json',
  '/api/v2/incidents/unresolved.json',
  '/api/v2/scheduled-maintenances.json',
  '/api/v2/scheduled-maintenances/upcoming.json',
  '/api/v2/scheduled-maintenances/active.json',
  '/api/v2/uptime.json',
  '/embed',
  '/history.atom',
  '/history.rss',
  '/badge.svg',
]
/** Every public path of a page at `root` ('' for a host): documents, the redirect, and the subscriber links. */
const paths = (root: string) => [
  ...documents.map((path) => ({ method: 'GET' as const, url: `${root}${path}` })),
  ...(root ? [{ method: 'GET' as const, url: root }] : []),
  { method: 'POST' as const, url: `${root}/subscribers`, payload: { email: 'someone@customer.example' } },
  { method: 'GET' as const, url: `${root}/subscribers/confirm?token=not-a-real-token` },
  { method: 'GET' as const, url: `${root}/subscribers/unsubscribe?token=not-a-real-token` },
  { method: 'POST' as const, url: `${root}/subscribers/unsubscribe?token=not-a-real-token` },
  { method: 'GET' as const, url: `${root}/access/verify?token=not-a-real-token` },
]
/** What an answer shows an outsider: its status, the headers that could differ, its body. */
const seen = async (request: { method: 'GET' | 'POST'; url: string; payload?: object }, headers: Record<string, string> = {}) => {
  const response = await app.inject({ ...request, headers: { 'accept-language': 'en', ...headers } })
  const { 'content-type': type, 'cache-control': caching, 'x-robots-tag': robots } = response.headers
  return { status: response.statusCode, type, caching, robots, body: response.body }
}

t.test('managers make a page private to members and named e-mail domains', async (t) => {
  t.equal(created.statusCode, 201, created.body)
  t.match(page, { visibility: 'private', viewerEmailDomains: ['customer.example'] }, 'domains are kept lower-case')
  const bad = await call(manager!, 'PATCH', pageBase, { viewerEmailDomains: ['not a domain'] })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /viewerEmailDomains/)
  const wrong = await call(manager!, 'PATCH', pageBase, { visibility: 'secret' })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.json().message, /visibility/)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['changes'])
    .where('entityId', '=', page.id)
    .where('action', '=', 'status_page.created')
    .executeTakeFirstOrThrow()
  t.match(audit.changes, { after: { visibility: 'private', viewerEmailDomains: ['customer.example'] } })
})

t.test('an outsider learns nothing: each path answers what it answers where no page is', async (t) => {
  const outsiders: Array<[string, Record<string, string>]> = [
    ['no credentials', {}],
    ['a member of another organization', stranger!.headers],
    ['an invalid token', { authorization: 'Bearer not.a.token' }],
    ['a forged viewer cookie', { cookie: 'svc_statuspage_viewer=forged-session-token' }],
  ]
  for (const [who, headers] of outsiders) {
    const bySlug = paths(slugRoot)
    const nowhere = paths(noneRoot)
    for (const [index, request] of bySlug.entries()) {
      const answer = await seen(request, headers)
      const none = await seen(nowhere[index]!, headers)
      t.same(answer, none, `${who}: ${request.method} ${request.url} reads as no page`)
      t.notMatch(answer.body, /Secret Sauce|Ledger/, `${who}: ${request.url} names nothing of the page`)
    }
    for (const request of paths('')) {
      const answer = await seen(request, { ...headers, host: DOMAIN })
      const none = await seen(request, { ...headers, host: 'nothing.hidden.example' })
      t.same(answer, none, `${who}: ${request.method} ${request.url} at the custom domain reads as no page`)
    }
  }
  const html = await get(`${slugRoot}/`)
  t.equal(html.statusCode, 404)
  t.match(html.body, /<form method="post" action="access">/, 'a browser is offered the sign-in form')
  t.match(html.headers['x-robots-tag'], /noindex/)
  t.equal(html.headers['cache-control'], 'no-store')
})

t.test('members read every path, signed in by Bearer or by the platform cookie; nothing is cached publicly', async (t) => {
  for (const [who, headers] of [
    ['Bearer', member!.headers],
    ['svc_id_token cookie', { cookie: `svc_id_token=${member!.token}` }],
  ] as const) {
    for (const path of documents) {
      const response = await get(`${slugRoot}${path}`, headers)
      t.equal(response.statusCode, 200, `${who}: ${path}`)
      t.equal(response.headers['cache-control'], 'private, no-cache', `${who}: ${path} is kept by the reader's browser only`)
      t.match(response.headers['x-robots-tag'], /noindex/, `${who}: ${path} is not indexed`)
      t.match(response.headers.vary, /Cookie, Authorization/)
      t.notOk(response.headers['access-control-allow-origin'], `${who}: ${path} is not readable by other sites`)
      t.equal(response.headers['cross-origin-resource-policy'], 'same-site')
    }
    const atDomain = await get('/api/v2/summary.json', { ...headers, host: DOMAIN })
    t.equal(atDomain.statusCode, 200, `${who}: at the custom domain too`)
  }
  const html = await get(`${slugRoot}/`, member!.headers)
  t.match(html.body, /<meta name="robots" content="noindex, nofollow">/)
  t.match(html.body, /Ledger delays/)
  t.match(html.body, /access\/sign-out/, 'the page offers signing out')
  const summary = (await get(`${slugRoot}/api/v2/summary.json`, member!.headers)).json()
  t.equal(summary.page.name, 'Secret Sauce')
})

const linkIn = (to: string, count: number) =>
  until(`sign-in e-mail ${count} to ${to}`, () => {
    const mails = smtp.received.filter((mail) => mail.envelopeTo.includes(to))
    return mails.length >= count ? mails[count - 1] : undefined
  })
const linkOf = (mail: { text: string }) => new URL(/Sign in: (\S+)/.exec(mail.text)![1]!)
// Asking is limited to 10 a minute per client address: each test asks from an address of its own.
let address = '198.51.100.1'
const ask = (email: string, root = slugRoot, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `${root}/access`, headers, payload: { email }, remoteAddress: address })

t.test('people of an allowed domain sign in with a link sent by e-mail; the answer to asking tells nothing', async (t) => {
  const answers = await Promise.all([
    ask('ana@customer.example'),
    ask('eve@elsewhere.example'),
    ask('ana@customer.example', noneRoot),
    ask('ana@customer.example', '', { host: 'nothing.hidden.example' }),
  ])
  for (const answer of answers) {
    t.equal(answer.statusCode, 202)
    t.same(answer.json(), { accepted: true })
  }
  const mail = await linkIn('ana@customer.example', 1)
  t.match(mail.subject, /Secret Sauce/)
  const link = linkOf(mail)
  t.match(link.pathname, `${slugRoot}/access/verify`)
  t.equal(smtp.received.filter((sent) => sent.envelopeTo.includes('eve@elsewhere.example')).length, 0, 'another domain is sent nothing')

  const button = await get(`${link.pathname}${link.search}`)
  t.equal(button.statusCode, 200, 'following the link (a mail scanner does) shows a button and uses nothing')
  t.match(button.body, /<form method="post"/)
  t.match(button.headers['x-robots-tag'], /noindex/)

  const signIn = await app.inject({ method: 'POST', url: `${link.pathname}${link.search}` })
  t.equal(signIn.statusCode, 303)
  t.match(signIn.headers.location, `${slugRoot}/`)
  const setCookie = String(signIn.headers['set-cookie'])
  t.match(
    setCookie,
    /^svc_statuspage_viewer=[\w-]{40,}; Max-Age=604800; Path=\/api\/v1\/statuspages\/public\/secret-sauce\/; HttpOnly; SameSite=Lax/,
  )
  const cookie = setCookie.split(';')[0]!

  const again = await app.inject({ method: 'POST', url: `${link.pathname}${link.search}` })
  t.equal(again.statusCode, 404, 'a link works once')
  const viewerPaths = ['/', '/api/v2/summary.json', '/history.atom', '/badge.svg', '/embed']
  for (const path of viewerPaths) t.equal((await get(`${slugRoot}${path}`, { cookie })).statusCode, 200, `the reader reads ${path}`)
  const elsewhere = (
    await call(manager!, 'POST', `${base}/pages`, { name: 'Other', slug: 'other-private', published: true, visibility: 'private' })
  ).json()
  t.equal((await get(`/api/v1/statuspages/public/${elsewhere.slug}/api/v2/summary.json`, { cookie })).statusCode, 404, 'not another page')

  const subscribed = await app.inject({
    method: 'POST',
    url: `${slugRoot}/subscribers`,
    headers: { cookie },
    payload: { email: 'ana@customer.example' },
  })
  t.equal(subscribed.statusCode, 202, 'a reader may subscribe')

  const signedOut = await app.inject({ method: 'POST', url: `${slugRoot}/access/sign-out`, headers: { cookie } })
  t.equal(signedOut.statusCode, 200)
  t.match(String(signedOut.headers['set-cookie']), /svc_statuspage_viewer=;.*Expires=Thu, 01 Jan 1970/)
  t.equal((await get(`${slugRoot}/api/v2/summary.json`, { cookie })).statusCode, 404, 'signed out, the cookie reads nothing')
})

t.test('a link expires, an address is sent five an hour, and a domain removed ends its readers’ sessions', async (t) => {
  address = '198.51.100.2'
  const before = smtp.received.length
  for (let asked = 0; asked < 7; asked++) t.equal((await ask('bo@customer.example')).statusCode, 202)
  const fifth = await linkIn('bo@customer.example', 5)
  t.ok(fifth, 'five links sent')
  await until('the outbox is empty', async () => {
    const pending = await db.selectFrom('core.outbox').select('id').where('status', 'in', ['pending', 'sending']).execute()
    return pending.length === 0
  })
  t.equal(smtp.received.filter((mail) => mail.envelopeTo.includes('bo@customer.example')).length, 5, 'the sixth and seventh were not sent')
  t.ok(smtp.received.length >= before + 5)

  const expiring = linkOf(fifth)
  await db
    .updateTable('divinux.statusPageAccessLinks')
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where('usedAt', 'is', null)
    .execute()
  const expired = await app.inject({ method: 'POST', url: `${expiring.pathname}${expiring.search}` })
  t.equal(expired.statusCode, 404, 'an expired link signs in nobody')

  await db.deleteFrom('divinux.statusPageAccessLinks').execute()
  address = '198.51.100.3'
  await ask('cy@customer.example')
  const link = linkOf(await linkIn('cy@customer.example', 1))
  const cookie = String((await app.inject({ method: 'POST', url: `${link.pathname}${link.search}` })).headers['set-cookie']).split(';')[0]!
  t.equal((await get(`${slugRoot}/api/v2/status.json`, { cookie })).statusCode, 200)
  await call(manager!, 'PATCH', pageBase, { viewerEmailDomains: ['partner.example'] })
  t.equal((await get(`${slugRoot}/api/v2/status.json`, { cookie })).statusCode, 404, 'the domain is no longer allowed: the session ended')
  const sessions = await db.selectFrom('divinux.statusPageViewerSessions').select('email').where('pageId', '=', page.id).execute()
  t.same(sessions, [], 'its row is gone')
})

t.test('asking for links is limited per client address (429 past 10 a minute)', async (t) => {
  address = '198.51.100.4'
  const statuses = []
  for (let asked = 0; asked < 11; asked++) statuses.push((await ask('nobody@elsewhere.example')).statusCode)
  t.same(statuses, [...Array(10).fill(202), 429])
})

t.test('a page made public again is public everywhere, cached publicly', async (t) => {
  const made = await call(manager!, 'PATCH', pageBase, { visibility: 'public' })
  t.equal(made.statusCode, 200)
  const summary = await get(`${slugRoot}/api/v2/summary.json`)
  t.equal(summary.statusCode, 200)
  t.match(summary.headers['cache-control'], /^public/)
  t.equal(summary.headers['access-control-allow-origin'], '*')
  t.notOk(summary.headers['x-robots-tag'])
  t.notMatch((await get(`${slugRoot}/`)).body, /noindex/)
})
