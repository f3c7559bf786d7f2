import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { startSmtpServer, startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Audience-specific status pages (issue 58; decision 0015, "Audiences"): one page, several
// audiences, each reading what is tagged for it beside what everyone reads; reached by its own
// link or by signing in with an address of its domain. Nothing tagged reaches anyone else: not the
// documents, the feeds, the widget, the badge, a shared cache, nor a subscriber's message.
const smtp = await startSmtpServer(t)
const receiver = await startWebhookReceiver(t, () => ({ status: 204 }))
const service = await startTestService(t, buildApp, {
  config: {
    outbound: { allowPrivateTargets: true },
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 },
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'audiences', {
  manager: { statuspages: 'manager' },
  viewer: { statuspages: 'viewer' },
  member: null,
})
const [manager, viewer, member] = ['manager', 'viewer', 'member'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })

const page = (await call(manager!, 'POST', `${base}/pages`, { name: 'Shared Cloud', slug: 'shared-cloud', published: true })).json()
const pageBase = `${base}/pages/${page.id}`
const root = '/api/v1/statuspages/public/shared-cloud'
const acmeCreated = await call(manager!, 'POST', `${pageBase}/audiences`, { name: 'Acme', emailDomains: ['ACME.example'] })
const acme = acmeCreated.json()
const globex = (await call(manager!, 'POST', `${pageBase}/audiences`, { name: 'Globex' })).json()
const component = async (name: string, fields: object = {}) =>
  (await call(manager!, 'POST', `${pageBase}/components`, { name, ...fields })).json()
const shared = await component('Public API')
const acmeDb = await component('Acme dedicated database', { audienceIds: [acme.id] })
const globexGroup = (await call(manager!, 'POST', `${pageBase}/component-groups`, { name: 'Globex cluster' })).json()
const globexQueue = await component('Globex queue', { audienceIds: [globex.id], groupId: globexGroup.id })
const incident = async (fields: object) => (await call(manager!, 'POST', `${pageBase}/incidents`, fields)).json()
// Everyone's incident names a component only Acme sees: the others read it without that component.
const slow = await incident({
  name: 'Public API slow',
  body: 'Requests take seconds.',
  impact: 'minor',
  components: [
    { componentId: shared.id, status: 'degraded_performance' },
    { componentId: acmeDb.id, status: 'degraded_performance' },
  ],
})
const failover = await incident({
  name: 'Acme database failover',
  body: 'Your database moved to its standby.',
  impact: 'major',
  audienceIds: [acme.id],
  components: [{ componentId: acmeDb.id, status: 'major_outage' }],
})
await call(manager!, 'POST', `${pageBase}/maintenances`, {
  name: 'Globex queue upgrade',
  scheduledFor: new Date(Date.now() + 86_400_000).toISOString(),
  scheduledUntil: new Date(Date.now() + 90_000_000).toISOString(),
  componentIds: [globexQueue.id],
  audienceIds: [globex.id],
})

const documents = [
  '/',
  '/api/v2/summary.json',
  '/api/v2/status.json',
  '/api/v2/components.json',
  '/api/v2/incidents.json',
  '/api/v2/incidents/unresolved.json',
  '/api/v2/scheduled-maintenances.json',
  '/api/v2/scheduled-maintenances/upcoming.json',
  '/api/v2/uptime.json',
  '/embed',
  '/history.atom',
  '/history.rss',
  '/badge.svg',
]
const ACME = /Acme dedicated|Acme database failover/
const GLOBEX = /Globex/
/** Every document of the page as these credentials read it, by path. */
const read = async (headers: Record<string, string> = {}, query = '') => {
  const answers = new Map<string, Awaited<ReturnType<typeof get>>>()
  for (const path of documents) answers.set(path, await get(`${root}${path}${query}`, headers))
  return answers
}

t.test('managers add audiences, each with a link shown once, and tag components and records for them', async (t) => {
  t.equal(acmeCreated.statusCode, 201, acmeCreated.body)
  t.match(acme, { name: 'Acme', emailDomains: ['acme.example'], link: /\/shared-cloud\/audience\?token=[\w-]{40,}$/ })
  const listed = await call(viewer!, 'GET', `${pageBase}/audiences`)
  t.equal(listed.statusCode, 200)
  t.same(
    listed.json().data.map((audience: { name: string; link?: string }) => [audience.name, audience.link]),
    [
      ['Acme', undefined],
      ['Globex', undefined],
    ],
    'a list never shows a link again',
  )
  t.equal((await call(viewer!, 'POST', `${pageBase}/audiences`, { name: 'Initech' })).statusCode, 403, 'viewers only read')
  t.equal((await call(manager!, 'POST', `${pageBase}/audiences`, { name: 'Acme' })).statusCode, 409, 'names are unique on a page')
  t.same(acmeDb.audienceIds, [acme.id])
  t.same(failover.audienceIds, [acme.id])
  t.same(slow.audienceIds, [])

  const unknown = await call(manager!, 'POST', `${pageBase}/components`, { name: 'X', audienceIds: [acme.id, page.id] })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /audienceIds\/1/)
  const otherPage = (await call(manager!, 'POST', `${base}/pages`, { name: 'Other', slug: 'other-audiences' })).json()
  const foreign = (await call(manager!, 'POST', `${base}/pages/${otherPage.id}/audiences`, { name: 'Elsewhere' })).json()
  const wrongPage = await call(manager!, 'PATCH', `${pageBase}/incidents/${slow.id}`, { audienceIds: [foreign.id] })
  t.equal(wrongPage.statusCode, 400, 'another page’s audience is not one of this page’s')
  t.match(wrongPage.json().message, /audienceIds\/0/)
  const otherOrg = await call(manager!, 'GET', `/api/v1/statuspages/organizations/${otherOrgId}/pages/${page.id}/audiences/${acme.id}`)
  t.equal(otherOrg.statusCode, 404, 'not a member there: as if no page were there')
  t.equal((await call(manager!, 'GET', `${base}/pages/${otherPage.id}/audiences/${acme.id}`)).statusCode, 404)

  const refused = await call(manager!, 'DELETE', `${pageBase}/audiences/${acme.id}`)
  t.equal(refused.statusCode, 409, 'an audience still tagging things is kept: untagged, they would be everyone’s')
  t.match(refused.json().message, /1 components and 1 incidents/)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select('changes')
    .where('entityId', '=', acme.id)
    .where('action', '=', 'status_audience.created')
    .executeTakeFirstOrThrow()
  t.match(audit.changes, { after: { name: 'Acme', emailDomains: ['acme.example'] } })
})

t.test('a reader of no audience reads only what is everyone’s, on every path', async (t) => {
  for (const [path, answer] of await read()) {
    t.equal(answer.statusCode, 200, path)
    t.notMatch(answer.body, ACME, `${path} names nothing of Acme`)
    t.notMatch(answer.body, GLOBEX, `${path} names nothing of Globex (not even its group)`)
    t.match(answer.headers['cache-control'], /^public/, `${path} is still public`)
    t.match(answer.headers.vary, /Cookie, Authorization/, `${path}: a shared cache keeps audiences’ answers apart`)
  }
  const summary = (await get(`${root}/api/v2/summary.json`)).json()
  t.same(
    summary.components.map((component: { name: string }) => component.name),
    ['Public API'],
  )
  const [everyone] = summary.incidents
  t.equal(everyone.name, 'Public API slow')
  t.same(
    everyone.components.map((component: { name: string }) => component.name),
    ['Public API'],
    'an incident names only the components the reader sees',
  )
  t.same(
    everyone.incident_updates[0].affected_components.map((change: { name: string }) => change.name),
    ['Public API'],
  )
  t.equal(summary.status.indicator, 'minor', 'the banner follows what the reader sees (Acme’s major outage is not theirs)')
})

const cookieOf = (answer: { headers: Record<string, unknown> }) => String(answer.headers['set-cookie']).split(';')[0]!

t.test('an audience’s link: the browser reads as the audience; feed readers carry the token', async (t) => {
  const link = new URL(acme.link)
  const followed = await get(`${link.pathname}${link.search}`)
  t.equal(followed.statusCode, 303)
  t.equal(followed.headers.location, `http://localhost:3003${root}/`)
  t.match(
    String(followed.headers['set-cookie']),
    /^svc_statuspage_audience=[\w-]{40,}; Max-Age=2592000; Path=\/api\/v1\/statuspages\/public\/shared-cloud\/; HttpOnly; SameSite=Lax/,
  )
  const cookie = cookieOf(followed)
  for (const [path, answer] of await read({ cookie })) {
    t.equal(answer.statusCode, 200, path)
    t.notMatch(answer.body, GLOBEX, `Acme reads nothing of Globex at ${path}`)
    t.equal(answer.headers['cache-control'], 'private, no-cache', `${path} is Acme’s own: no shared cache keeps it`)
    t.notOk(answer.headers['access-control-allow-origin'], `${path} is not readable by other sites`)
  }
  const summary = (await get(`${root}/api/v2/summary.json`, { cookie })).json()
  t.same(
    summary.components.map((component: { name: string }) => component.name),
    ['Public API', 'Acme dedicated database'],
  )
  t.same(summary.incidents.map((incident: { name: string }) => incident.name).sort(), ['Acme database failover', 'Public API slow'])
  t.equal(summary.status.indicator, 'critical')
  const html = (await get(`${root}/`, { cookie })).body
  t.match(html, /Acme database failover/)
  t.match(html, /access\/sign-out/, 'an audience’s reader may leave it')

  const token = link.searchParams.get('token')!
  const feed = await get(`${root}/history.atom?audience=${token}`)
  t.match(feed.body, /Acme database failover/, 'a feed reader, which keeps no cookie, reads Acme’s feed by the token')
  t.equal(feed.headers['cache-control'], 'private, no-cache')
  t.notMatch((await get(`${root}/history.atom`)).body, ACME, 'and the feed without it is still everyone’s (no cache mixed them)')

  const forged = await get(`${root}/audience?token=not-a-token-of-this-page`)
  t.equal(forged.statusCode, 404)
  t.notOk(forged.headers['set-cookie'])
  t.notMatch((await get(`${root}/api/v2/summary.json`, { cookie: 'svc_statuspage_audience=forged-token-value' })).body, ACME)

  const signedOut = await app.inject({ method: 'POST', url: `${root}/access/sign-out`, headers: { cookie } })
  t.match(String(signedOut.headers['set-cookie']), /svc_statuspage_audience=;.*Expires=Thu, 01 Jan 1970/)
})

t.test('a new link voids the old one, and the browsers that followed it', async (t) => {
  const old = new URL(globex.link)
  const cookie = cookieOf(await get(`${old.pathname}${old.search}`))
  t.match((await get(`${root}/api/v2/summary.json`, { cookie })).body, GLOBEX)
  const renewed = await call(manager!, 'POST', `${pageBase}/audiences/${globex.id}/link`)
  t.equal(renewed.statusCode, 200)
  t.not(renewed.json().link, globex.link)
  t.notMatch((await get(`${root}/api/v2/summary.json`, { cookie })).body, GLOBEX, 'the old cookie reads as no audience')
  t.equal((await get(`${old.pathname}${old.search}`)).statusCode, 404)
  const fresh = new URL(renewed.json().link)
  t.match((await get(`${root}/api/v2/summary.json?audience=${fresh.searchParams.get('token')}`)).body, GLOBEX)
  globex.link = renewed.json().link
})

t.test('people of an audience’s domain sign in by an e-mailed link; members read everything', async (t) => {
  const html = (await get(`${root}/`)).body
  t.match(html, /<form method="post" action="[^"]*\/shared-cloud\/access">/, 'the public page offers signing in')
  for (const email of ['ana@acme.example', 'eve@globex.example'])
    t.equal((await app.inject({ method: 'POST', url: `${root}/access`, payload: { email } })).statusCode, 202)
  const mail = await until('the sign-in e-mail', () => smtp.received.find((sent) => sent.envelopeTo.includes('ana@acme.example')))
  const link = new URL(/Sign in: (\S+)/.exec(mail.text)![1]!)
  const signIn = await app.inject({ method: 'POST', url: `${link.pathname}${link.search}` })
  t.equal(signIn.statusCode, 303)
  const cookie = cookieOf(signIn)
  const summary = await get(`${root}/api/v2/summary.json`, { cookie })
  t.match(summary.body, /Acme database failover/, 'an address of acme.example reads as Acme')
  t.notMatch(summary.body, GLOBEX)
  t.equal(smtp.received.filter((sent) => sent.envelopeTo.includes('eve@globex.example')).length, 0, 'Globex has no domain: no link')

  await call(manager!, 'PATCH', `${pageBase}/audiences/${acme.id}`, { emailDomains: ['acme.test'] })
  t.notMatch((await get(`${root}/api/v2/summary.json`, { cookie })).body, ACME, 'the domain removed, the session ended')
  await call(manager!, 'PATCH', `${pageBase}/audiences/${acme.id}`, { emailDomains: ['acme.example'] })

  for (const headers of [member!.headers, { cookie: `svc_id_token=${member!.token}` }]) {
    const all = await get(`${root}/api/v2/summary.json`, headers)
    t.match(all.body, ACME)
    t.match(all.body, GLOBEX, 'a member of the organization reads every audience')
    t.equal(all.headers['cache-control'], 'private, no-cache')
  }
})

t.test('subscribers are told only of what their audience reads', async (t) => {
  const subscribe = async (path: string, headers: Record<string, string> = {}) => {
    const answer = await app.inject({ method: 'POST', url: `${root}/subscribers`, headers, payload: { url: `${receiver.url}${path}` } })
    t.equal(answer.statusCode, 201, answer.body)
    return answer.json().secret as string
  }
  const acmeLink = new URL(acme.link)
  const acmeCookie = cookieOf(await get(`${acmeLink.pathname}${acmeLink.search}`))
  const secrets = {
    '/everyone': await subscribe('/everyone'),
    '/acme': await subscribe('/acme', { cookie: acmeCookie }),
  }
  const followAcme = await app.inject({
    method: 'POST',
    url: `${root}/subscribers`,
    payload: { url: `${receiver.url}/sneaky`, componentIds: [acmeDb.id] },
  })
  t.equal(followAcme.statusCode, 400, 'a component of another audience is not one to follow')
  t.match(followAcme.json().message, /componentIds\/0/)
  const stored = await db.selectFrom('divinux.statusSubscribers').select(['url', 'audienceIds']).where('pageId', '=', page.id).execute()
  t.same(
    stored.map((row) => [new URL(row.url!).pathname, row.audienceIds]),
    [
      ['/everyone', []],
      ['/acme', [acme.id]],
    ],
  )

  await incident({ name: 'Acme backups late', body: 'Last night’s backup is still running.', audienceIds: [acme.id] })
  await incident({
    name: 'Storage degraded',
    body: 'Writes are slow.',
    impact: 'minor',
    components: [
      { componentId: shared.id, status: 'degraded_performance' },
      { componentId: acmeDb.id, status: 'degraded_performance' },
    ],
  })
  type Event = { data: { incident: { name: string; components: Array<{ name: string }> }; page: { status_indicator: string } } }
  const events = (path: keyof typeof secrets) =>
    receiver.received
      .filter((entry) => entry.path === path)
      .map(
        (entry) =>
          new Webhook(secrets[path]).verify(entry.raw, {
            'webhook-id': String(entry.headers['webhook-id']),
            'webhook-timestamp': String(entry.headers['webhook-timestamp']),
            'webhook-signature': String(entry.headers['webhook-signature']),
          }) as Event,
      )
  await until('Acme’s two events', () => events('/acme').length >= 2)
  await until('everyone’s event', () => events('/everyone').length >= 1)
  const acmeStorage = events('/acme').find((event) => event.data.incident.name === 'Storage degraded')!
  t.same(
    acmeStorage.data.incident.components.map((component) => component.name),
    ['Public API', 'Acme dedicated database'],
  )
  t.ok(events('/acme').some((event) => event.data.incident.name === 'Acme backups late'))
  const [everyone] = events('/everyone')
  t.equal(everyone!.data.incident.name, 'Storage degraded')
  t.same(
    everyone!.data.incident.components.map((component) => component.name),
    ['Public API'],
    'everyone’s message names only their components',
  )
  t.equal(everyone!.data.page.status_indicator, 'minor', 'and the page’s status as they read it')
  t.equal(acmeStorage.data.page.status_indicator, 'critical', 'Acme’s message reads Acme’s outage')
  t.equal(events('/everyone').length, 1, 'nothing of Acme’s went to everyone')
})

t.test('a private page with audiences: the link is a credential, and outsiders still read nothing', async (t) => {
  await call(manager!, 'PATCH', pageBase, { visibility: 'private' })
  t.equal((await get(`${root}/api/v2/summary.json`)).statusCode, 404)
  const followed = await get(`${new URL(acme.link).pathname}${new URL(acme.link).search}`)
  const cookie = cookieOf(followed)
  const summary = await get(`${root}/api/v2/summary.json`, { cookie })
  t.equal(summary.statusCode, 200, 'Acme’s link reads the private page')
  t.match(summary.body, ACME)
  t.notMatch(summary.body, GLOBEX)
  t.equal((await get(`${root}/audience?token=forged-token-of-no-page`)).statusCode, 404)
  await call(manager!, 'PATCH', pageBase, { visibility: 'public' })
})

t.test('an audience tagging nothing goes; its subscribers stay, told what everyone is told', async (t) => {
  const initech = (await call(manager!, 'POST', `${pageBase}/audiences`, { name: 'Initech' })).json()
  const removed = await call(manager!, 'DELETE', `${pageBase}/audiences/${initech.id}`)
  t.equal(removed.statusCode, 204)
  t.equal((await call(manager!, 'GET', `${pageBase}/audiences/${initech.id}`)).statusCode, 404)
  t.equal((await get(`${new URL(initech.link).pathname}${new URL(initech.link).search}`)).statusCode, 404, 'its link goes with it')
})
