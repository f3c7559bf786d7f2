import { sql } from 'kysely'
import type * as AdaptiveCardsSdk from 'adaptivecards'
import { createRequire } from 'node:module'
import Parser from 'rss-parser'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { DEFAULT_NOTIFIER_CONFIG } from '@svc/config'
import { publish } from '@svc/events'
import { startDnsServer, startSmtpServer, startTestService, startWebhookReceiver, until } from '@svc/testkit'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Microsoft's Adaptive Cards SDK, whose card model Teams renders. Its ES modules name their
// imports without the file extensions Node needs, so its UMD bundle is loaded instead.
const AdaptiveCards = createRequire(import.meta.url)('adaptivecards/dist/adaptivecards.min.js') as typeof AdaptiveCardsSdk

const smtp = await startSmtpServer(t)
const receiver = await startWebhookReceiver(t, () => ({ status: 204 }))
const dns = await startDnsServer(t)
const service = await startTestService(t, buildApp, {
  config: {
    dnsServers: [dns.address],
    outbound: { allowPrivateTargets: true },
    notifier: { ...DEFAULT_NOTIFIER_CONFIG, smtpUrl: smtp.url, from: 'Status <status@example.com>', retryDelaySeconds: 1 },
  },
})
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'pages', {
  manager: { statuspages: 'manager' },
  responder: { statuspages: 'responder' },
  viewer: { statuspages: 'viewer' },
})
const [manager, responder, viewer, stranger] = ['manager', 'responder', 'viewer', 'stranger'].map(person)
type Who = { headers: { authorization: string } }
const base = `/api/v1/statuspages/organizations/${orgId}`
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const publicGet = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })

const page = (
  await call(manager!, 'POST', `${base}/pages`, { name: 'Acme', slug: 'acme', published: true, timeZone: 'Europe/Berlin' })
).json()
const pageBase = `${base}/pages/${page.id}`
const publicBase = '/api/v1/statuspages/public/acme'
const group = (await call(manager!, 'POST', `${pageBase}/component-groups`, { name: 'Core' })).json()
const api = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'API', groupId: group.id, alertServices: ['api'] })).json()
const web = (await call(manager!, 'POST', `${pageBase}/components`, { name: 'Website' })).json()
const statusOf = async (component: { id: string }) => (await call(viewer!, 'GET', `${pageBase}/components/${component.id}`)).json().status

t.test('pages: slugs and domains are unique, bad fields are named, roles and organizations are kept apart', async (t) => {
  t.equal(page.slug, 'acme')
  t.match(page.publicUrl, /\/api\/v1\/statuspages\/public\/acme\/$/)
  const refused: Array<[object, number, RegExp]> = [
    [{ name: 'Other', slug: 'acme' }, 409, /slug/],
    [{ name: 'Other', slug: 'Upper' }, 400, /slug/],
    [{ name: 'Other', slug: 'tz', timeZone: 'Mars/Olympus' }, 400, /timeZone/],
    [{ name: 'Other', slug: 'bad-domain', customDomain: 'not a domain' }, 400, /customDomain/],
  ]
  for (const [payload, status, message] of refused) {
    const response = await call(manager!, 'POST', `${base}/pages`, payload)
    t.equal(response.statusCode, status, JSON.stringify(payload))
    t.match(response.json().message, message)
  }
  const second = (
    await call(manager!, 'POST', `${base}/pages`, { name: 'Second', slug: 'second', customDomain: 'Status.Acme.test' })
  ).json()
  t.equal(second.customDomain, 'status.acme.test')
  t.match(second.publicUrl, /\/public\/second\/$/, 'an unverified domain is not the public address')
  t.match(second.customDomainVerification, { status: 'pending', recordName: '_statuspage-verification.status.acme.test' })
  dns.txt.set('_statuspage-verification.status.acme.test', [second.customDomainVerification.recordValue])
  t.equal((await call(manager!, 'POST', `${base}/pages/${second.id}/custom-domain/verify`)).statusCode, 200)
  const taken = await call(manager!, 'PATCH', `${pageBase}`, { customDomain: 'status.acme.test' })
  t.equal(taken.statusCode, 409, 'a verified domain is taken')
  t.match(taken.json().message, /customDomain/)
  t.equal((await call(viewer!, 'POST', `${base}/pages`, { name: 'X', slug: 'x' })).statusCode, 403)
  t.equal((await call(responder!, 'PATCH', pageBase, { name: 'X' })).statusCode, 403)
  t.equal((await call(stranger!, 'GET', `/api/v1/statuspages/organizations/${otherOrgId}/pages/${page.id}`)).statusCode, 404)
  t.equal((await call(stranger!, 'GET', `${pageBase}`)).statusCode, 404)
  const listed = (await call(viewer!, 'GET', `${base}/pages`)).json()
  t.same(
    listed.data.map((row: { slug: string }) => row.slug),
    ['acme', 'second'],
  )
  t.equal((await call(manager!, 'DELETE', `${base}/pages/${second.id}`)).statusCode, 204)
  t.equal((await call(viewer!, 'GET', `${base}/pages/${second.id}`)).statusCode, 404)
})

t.test('components: ordered, grouped in groups of the same page, each status change recorded', async (t) => {
  t.equal(api.position, 0)
  t.equal(web.position, 1)
  t.equal(api.groupId, group.id)
  const badGroup = await call(manager!, 'POST', `${pageBase}/components`, { name: 'X', groupId: '00000000-0000-4000-8000-000000000000' })
  t.equal(badGroup.statusCode, 400)
  t.match(badGroup.json().message, /groupId/)
  const changed = await call(manager!, 'PATCH', `${pageBase}/components/${web.id}`, { status: 'degraded_performance' })
  t.equal(changed.json().status, 'degraded_performance')
  await call(manager!, 'PATCH', `${pageBase}/components/${web.id}`, { status: 'operational' })
  const history = await db
    .selectFrom('divinux.statusComponentChanges')
    .select('status')
    .where('componentId', '=', web.id)
    .orderBy('id')
    .execute()
  t.same(
    history.map((row) => row.status),
    ['operational', 'degraded_performance', 'operational'],
  )
  const listed = (await call(viewer!, 'GET', `${pageBase}/components`)).json()
  t.same(
    listed.data.map((row: { name: string }) => row.name),
    ['API', 'Website'],
  )
})

let incidentId = ''

t.test('incidents move their components, and resolving returns them unless another incident holds them', async (t) => {
  const unknown = await call(manager!, 'POST', `${pageBase}/incidents`, {
    name: 'Errors',
    body: 'Looking',
    components: [
      { componentId: api.id, status: 'major_outage' },
      { componentId: '00000000-0000-4000-8000-000000000000', status: 'major_outage' },
    ],
  })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /components\/1\/componentId/)
  t.equal((await call(responder!, 'POST', `${pageBase}/incidents`, { name: 'X', body: 'y' })).statusCode, 403, 'opening needs manager')

  const opened = await call(manager!, 'POST', `${pageBase}/incidents`, {
    name: 'Elevated API errors',
    body: 'We are investigating elevated error rates.',
    impact: 'major',
    components: [{ componentId: api.id, status: 'major_outage' }],
  })
  t.equal(opened.statusCode, 201)
  incidentId = opened.json().id
  t.equal(opened.json().status, 'investigating')
  t.same(opened.json().updates[0].affectedComponents, [{ code: api.id, name: 'API', oldStatus: 'operational', newStatus: 'major_outage' }])
  t.equal(await statusOf(api), 'major_outage')

  const other = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'Slow API',
      body: 'Slow',
      impact: 'minor',
      components: [{ componentId: api.id, status: 'degraded_performance' }],
    })
  ).json()
  t.equal(await statusOf(api), 'major_outage', 'the worst holder wins')

  const update = await call(responder!, 'POST', `${pageBase}/incidents/${incidentId}/updates`, {
    body: 'Fixed; all good.',
    status: 'resolved',
  })
  t.equal(update.statusCode, 201)
  t.equal(await statusOf(api), 'degraded_performance', 'still held by the other incident')
  const back = await call(responder!, 'POST', `${pageBase}/incidents/${incidentId}/updates`, { body: 'Again', status: 'investigating' })
  t.equal(back.statusCode, 400)
  t.match(back.json().message, /status/)

  await call(responder!, 'POST', `${pageBase}/incidents/${other.id}/updates`, { body: 'Recovered', status: 'resolved' })
  t.equal(await statusOf(api), 'operational')
  const read = (await call(viewer!, 'GET', `${pageBase}/incidents/${incidentId}`)).json()
  t.equal(read.status, 'resolved')
  t.ok(read.resolvedAt)
  t.equal(read.updates.length, 2)
  t.equal(
    (await call(stranger!, 'GET', `/api/v1/statuspages/organizations/${otherOrgId}/pages/${page.id}/incidents/${incidentId}`)).statusCode,
    404,
  )
})

t.test('a draft incident changes nothing public until it is published', async (t) => {
  const draft = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'Draft',
      body: 'Maybe',
      impact: 'critical',
      published: false,
      components: [{ componentId: web.id, status: 'partial_outage' }],
    })
  ).json()
  t.equal(await statusOf(web), 'operational')
  t.equal((await publicGet(`${publicBase}/api/v2/incidents/unresolved.json`)).json().incidents.length, 0)
  await call(manager!, 'PATCH', `${pageBase}/incidents/${draft.id}`, { published: true })
  t.equal(await statusOf(web), 'partial_outage')
  t.equal((await publicGet(`${publicBase}/api/v2/incidents/unresolved.json`)).json().incidents.length, 1)
  t.equal((await call(manager!, 'DELETE', `${pageBase}/incidents/${draft.id}`)).statusCode, 204)
  t.equal(await statusOf(web), 'operational')
})

t.test('maintenance windows start and complete on their own; bad windows and moves are refused', async (t) => {
  const backwards = await call(manager!, 'POST', `${pageBase}/maintenances`, {
    name: 'DB upgrade',
    scheduledFor: '2030-01-01T10:00:00Z',
    scheduledUntil: '2030-01-01T09:00:00Z',
  })
  t.equal(backwards.statusCode, 400)
  t.match(backwards.json().message, /scheduledUntil/)
  const soon = new Date(Date.now() + 60_000)
  const maintenance = (
    await call(manager!, 'POST', `${pageBase}/maintenances`, {
      name: 'Database upgrade',
      scheduledFor: soon.toISOString(),
      scheduledUntil: new Date(soon.getTime() + 3_600_000).toISOString(),
      componentIds: [web.id],
    })
  ).json()
  t.equal(maintenance.status, 'scheduled')
  const upcoming = (await publicGet(`${publicBase}/api/v2/scheduled-maintenances/upcoming.json`)).json().scheduled_maintenances
  t.equal(upcoming.length, 1)
  t.same(
    upcoming[0].incident_updates[0].affected_components,
    [{ code: web.id, name: 'Website', old_status: 'operational', new_status: 'operational' }],
    'a scheduled maintenance’s update lists its components, as Statuspage does',
  )
  // The page is in Europe/Berlin: Statuspage writes its times there, with the offset.
  t.match(upcoming[0].scheduled_for, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0[12]:00$/)
  t.equal(Date.parse(upcoming[0].scheduled_for), Date.parse(soon.toISOString()), 'the same instant')
  t.match(upcoming[0].incident_updates[0].display_at, /\+0[12]:00$/)

  await sql`update pgboss.job set start_after = now() where name = 'statuspages.maintenance' and data->>'to' = 'in_progress'`.execute(db)
  await until('the maintenance to start', async () => (await statusOf(web)) === 'under_maintenance')
  const active = (await publicGet(`${publicBase}/api/v2/scheduled-maintenances/active.json`)).json()
  t.equal(active.scheduled_maintenances[0].status, 'in_progress')
  t.same(active.scheduled_maintenances[0].incident_updates[0].affected_components, [
    { code: web.id, name: 'Website', old_status: 'operational', new_status: 'under_maintenance' },
  ])
  t.equal(
    active.scheduled_maintenances[0].incident_updates[0].body,
    'Scheduled maintenance is currently in progress. We will provide updates as necessary.',
  )

  const backward = await call(responder!, 'POST', `${pageBase}/maintenances/${maintenance.id}/updates`, { body: 'x', status: 'scheduled' })
  t.equal(backward.statusCode, 400)
  t.match(backward.json().message, /status/)

  await sql`update pgboss.job set start_after = now() where name = 'statuspages.maintenance' and data->>'to' = 'completed'`.execute(db)
  await until('the maintenance to complete', async () => (await statusOf(web)) === 'operational')
  const done = (await call(viewer!, 'GET', `${pageBase}/maintenances/${maintenance.id}`)).json()
  t.equal(done.status, 'completed')
  t.equal((await call(manager!, 'PATCH', `${pageBase}/maintenances/${maintenance.id}`, { name: 'Later' })).statusCode, 400)
})

t.test('public documents speak Statuspage API v2, are cached with ETags and readable from any origin', async (t) => {
  await call(manager!, 'POST', `${pageBase}/incidents`, {
    name: 'Website slow',
    body: 'Pages load slowly.',
    impact: 'minor',
    components: [{ componentId: web.id, status: 'degraded_performance' }],
  })
  const summary = await publicGet(`${publicBase}/api/v2/summary.json`, { origin: 'https://elsewhere.example' })
  t.equal(summary.statusCode, 200)
  t.equal(summary.headers['access-control-allow-origin'], '*')
  t.notOk(summary.headers['access-control-allow-credentials'])
  t.match(summary.headers['cache-control'], /public, max-age=\d+/)
  // A page that does not exist says so to any origin too, so a widget can tell it from a network error.
  const missing = await publicGet('/api/v1/statuspages/public/no-such-page/api/v2/summary.json', { origin: 'https://elsewhere.example' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['access-control-allow-origin'], '*')
  const body = summary.json()
  t.match(body.page, { id: page.id, name: 'Acme', time_zone: 'Europe/Berlin' })
  t.same(body.status, { indicator: 'minor', description: 'Minor Service Outage' })
  t.match(body.components[0], { id: group.id, name: 'Core', group: true, components: [api.id], status: 'operational' })
  t.match(body.components[1], { id: api.id, group_id: group.id, group: false, status: 'operational', only_show_if_degraded: false })
  t.match(body.components[2], { id: web.id, status: 'degraded_performance' })
  t.match(body.incidents[0], { name: 'Website slow', status: 'investigating', impact: 'minor', page_id: page.id })
  t.match(body.incidents[0].incident_updates[0], {
    body: 'Pages load slowly.',
    affected_components: [{ code: web.id, name: 'Website', old_status: 'operational', new_status: 'degraded_performance' }],
  })

  const again = await publicGet(`${publicBase}/api/v2/summary.json`, { 'if-none-match': String(summary.headers.etag) })
  t.equal(again.statusCode, 304)
  await call(manager!, 'PATCH', `${pageBase}/components/${api.id}`, { name: 'Public API' })
  const changed = await publicGet(`${publicBase}/api/v2/summary.json`, { 'if-none-match': String(summary.headers.etag) })
  t.equal(changed.statusCode, 200, 'a change shows at once on this replica')
  t.equal(changed.json().components[1].name, 'Public API')

  for (const document of [
    'status',
    'components',
    'incidents',
    'incidents/unresolved',
    'scheduled-maintenances',
    'scheduled-maintenances/upcoming',
    'scheduled-maintenances/active',
  ]) {
    const response = await publicGet(`${publicBase}/api/v2/${document}.json`)
    t.equal(response.statusCode, 200, document)
    t.ok(response.json().page, document)
  }
  t.equal((await publicGet(`${publicBase}/api/v2/incidents.json`)).json().incidents.length, 3)
  t.equal((await publicGet(`${publicBase}/api/v2/scheduled-maintenances.json`)).json().scheduled_maintenances[0].status, 'completed')
  t.equal((await publicGet('/api/v1/statuspages/public/nope/api/v2/summary.json')).statusCode, 404)
})

t.test('uptime counts outages by their weight and leaves maintenance out', async (t) => {
  const uptime = (await publicGet(`${publicBase}/api/v2/uptime.json`)).json()
  t.equal(uptime.partial_outage_weight, 0.3)
  const website = uptime.components.find((component: { id: string }) => component.id === web.id)
  t.equal(website.days.length, 90)
  const today = website.days[89]
  t.ok(today.maintenance_seconds > 0 || today.partial_outage_seconds >= 0)
  t.equal(website.days[0].uptime, null, 'no data before the component existed')
  t.ok(website.uptime_percentage <= 100)
})

t.test('a component held by its check alone shows the check’s state, and turns the banner red only where the page asks', async (t) => {
  const checked = (await call(manager!, 'POST', `${base}/pages`, { name: 'Checked', slug: 'checked', published: true })).json()
  t.equal(checked.bannerFollowsChecks, false, 'off unless asked')
  const login = (await call(manager!, 'POST', `${base}/pages/${checked.id}/components`, { name: 'Login' })).json()
  const judged = async (state: 'failing' | 'passing', at: Date) =>
    db.transaction().execute((trx) =>
      publish(app.jobs, trx, 'check.state_changed', {
        organizationId: orgId,
        checkId: '00000000-0000-4000-8000-00000000c4ec',
        name: 'Login page',
        kind: 'http',
        target: 'https://login.example.com/',
        state,
        previous: state === 'failing' ? 'passing' : 'failing',
        failingRegions: state === 'failing' ? ['eu'] : [],
        priority: 'P3',
        escalationPolicyId: null,
        statusComponentIds: [login.id],
        at: at.toISOString(),
      }),
    )
  const summary = async () => (await publicGet('/api/v1/statuspages/public/checked/api/v2/summary.json')).json()

  await judged('failing', new Date())
  await until('the component to follow its check', async () => (await summary()).components[0]?.status === 'major_outage')
  t.same((await summary()).status, { indicator: 'none', description: 'All Systems Operational' }, 'no incident explains it: no banner')

  const asked = await call(manager!, 'PATCH', `${base}/pages/${checked.id}`, { bannerFollowsChecks: true })
  t.equal(asked.json().bannerFollowsChecks, true)
  await until('the banner to follow the check', async () => (await summary()).status.indicator === 'critical')
  t.equal((await summary()).status.description, 'Major System Outage')

  await call(manager!, 'PATCH', `${base}/pages/${checked.id}`, { bannerFollowsChecks: false })
  await call(manager!, 'PATCH', `${base}/pages/${checked.id}/components/${login.id}`, { status: 'partial_outage' })
  await until('a status set by hand to reach the banner', async () => (await summary()).status.indicator === 'major')

  await judged('passing', new Date(Date.now() + 1000))
  await until('the check to let go', async () => (await summary()).components[0]?.status === 'operational')
  t.same((await summary()).status.indicator, 'none', 'what holds it now is what its incidents and maintenances hold: nothing')
  t.equal((await call(manager!, 'DELETE', `${base}/pages/${checked.id}`)).statusCode, 204)
})

t.test('the page is served at its custom domain by the Host header; unpublished pages are 404', async (t) => {
  const claimed = (await call(manager!, 'PATCH', pageBase, { customDomain: 'status.acme.example' })).json()
  dns.txt.set(claimed.customDomainVerification.recordName, [claimed.customDomainVerification.recordValue])
  t.equal((await call(manager!, 'POST', `${pageBase}/custom-domain/verify`)).statusCode, 200)
  const byHost = await app.inject({ method: 'GET', url: '/api/v2/status.json', headers: { host: 'status.acme.example' } })
  t.equal(byHost.statusCode, 200)
  t.equal(byHost.json().page.url, 'https://status.acme.example/')
  t.equal((await app.inject({ method: 'GET', url: '/api/v2/status.json', headers: { host: 'unknown.example' } })).statusCode, 404)
  const html = await app.inject({ method: 'GET', url: '/', headers: { host: 'status.acme.example' } })
  t.equal(html.statusCode, 200)
  t.match(html.headers['content-type'], /text\/html/)
  await call(manager!, 'PATCH', pageBase, { published: false })
  t.equal((await publicGet(`${publicBase}/api/v2/summary.json`)).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/', headers: { host: 'status.acme.example' } })).statusCode, 404)
  await call(manager!, 'PATCH', pageBase, { published: true, customDomain: null })
})

t.test('HTML, feeds and badge', async (t) => {
  const html = await publicGet(`${publicBase}/`)
  t.equal(html.statusCode, 200)
  t.match(html.body, /<title>Acme Status<\/title>/)
  t.match(html.body, /Minor Service Outage/)
  t.match(html.body, /Website slow/)
  t.match(html.body, /Public API/)
  t.match(html.body, /class="bars"/)
  t.notMatch(html.body, /<script/i)
  t.match(
    html.headers['content-security-policy'],
    /default-src 'none'; style-src 'sha256-[\w+/=]+'/,
    'no script may run, only its own style sheet',
  )
  t.equal((await publicGet(publicBase)).statusCode, 301)
  const atom = await publicGet(`${publicBase}/history.atom`)
  t.match(atom.headers['content-type'], /application\/atom\+xml/)
  t.match(atom.body, /<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/)
  t.match(atom.body, /Elevated API errors/)
  const rss = await publicGet(`${publicBase}/history.rss`)
  t.match(rss.body, /<rss version="2.0"/)
  t.match(rss.body, /Website slow/)
  const badge = await publicGet(`${publicBase}/badge.svg`)
  t.match(badge.headers['content-type'], /image\/svg\+xml/)
  t.match(badge.body, /<svg[^>]*>/)
  t.match(badge.body, /minor service outage/)
})

t.test('other sites may embed what is public: cross-origin resources, and a frameable widget', async (t) => {
  for (const path of ['/badge.svg', '/history.atom', '/history.rss', '/api/v2/summary.json', '/', '/embed']) {
    const answer = await publicGet(`${publicBase}${path}`)
    t.equal(answer.headers['cross-origin-resource-policy'], 'cross-origin', `${path} may be loaded by any site`)
    t.equal(answer.headers['access-control-allow-origin'], '*', `${path} may be read by any site`)
  }
  const signedIn = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: manager!.headers })
  t.equal(signedIn.headers['cross-origin-resource-policy'], 'same-site', 'the rest of the API stays same-site')

  const page = await publicGet(`${publicBase}/`)
  t.equal(page.headers['x-frame-options'], 'SAMEORIGIN', 'the full page is not framed')
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/)
  const widget = await publicGet(`${publicBase}/embed`)
  t.equal(widget.statusCode, 200)
  t.match(widget.headers['content-type'], /text\/html/)
  t.notOk(widget.headers['x-frame-options'], 'the widget is made to be framed')
  t.match(
    widget.headers['content-security-policy'],
    /default-src 'none'; style-src 'sha256-[\w+/=]+' 'sha256-[\w+/=]+';.* frame-ancestors \*/,
  )
  t.notMatch(widget.body, /<script/i)
  t.match(widget.body, /data-indicator="minor"/)
  t.match(widget.body, /Minor Service Outage/)
  t.match(widget.body, /<li>Website slow<\/li>/, 'unresolved incidents are named')
  t.match(widget.body, /href="https?:\/\/[^"]+\/acme\/" target="_top" rel="noopener"/, 'the link opens the full page')
  t.equal((await publicGet(`${publicBase}/embed`, { 'if-none-match': widget.headers.etag as string })).statusCode, 304)
})

t.test('the feeds read as feed readers read them: an author, and text in RSS descriptions', async (t) => {
  const parser = new Parser({ customFields: { feed: ['author'] } })
  const atom = await parser.parseString((await publicGet(`${publicBase}/history.atom`)).body)
  t.match(atom, { title: 'Acme status history', author: { name: ['Acme'] } }, 'the feed has an author (RFC 4287 4.1.1)')
  const atomEntry = atom.items.find((item) => item.title === 'Elevated API errors')
  t.match(atomEntry, { summary: /^(Investigating|Identified|Monitoring|Resolved) - / })
  const rss = await parser.parseString((await publicGet(`${publicBase}/history.rss`)).body)
  const rssItem = rss.items.find((item) => item.title === 'Website slow')
  t.ok(rssItem, 'the incident is an item')
  t.match(rssItem?.contentSnippet, /^(Investigating|Identified|Monitoring|Resolved) - /, '<description> holds the latest update as text')
  t.match(rssItem?.['content:encoded'], /<p>/, 'content:encoded still holds every update')
})

t.test('a name and an update are text in the feeds’ HTML fields, never markup', async (t) => {
  const name = '<img src=x onerror=alert(1)> & co'
  const opened = await call(manager!, 'POST', `${pageBase}/incidents`, {
    name,
    body: '<script>alert(2)</script> ]]> done',
    impact: 'minor',
  })
  t.equal(opened.statusCode, 201)
  t.teardown(async () => void (await call(manager!, 'DELETE', `${pageBase}/incidents/${opened.json().id}`)))
  for (const feed of ['history.atom', 'history.rss']) {
    const { body } = await publicGet(`${publicBase}/${feed}`)
    t.notMatch(body, /<img|<script|onerror=alert\(1\)>/, `${feed}: no markup from the name or the update`)
    t.match(body, '&lt;img src=x onerror=alert(1)&gt; &amp; co', `${feed}: the name, escaped`)
    t.notMatch(body, /\]\]> done/, `${feed}: an update cannot close the CDATA section`)
    const parsed = await new Parser().parseString(body)
    t.ok(
      parsed.items.some((item) => item.title === '&lt;img src=x onerror=alert(1)&gt; &amp; co'),
      `${feed}: the title is the name as HTML text, which a reader shows as written`,
    )
  }
})

t.test('subscribers: e-mail is double opt-in, webhooks are signed, either can unsubscribe', async (t) => {
  const subscribed = await app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload: { email: 'fan@example.com' } })
  t.equal(subscribed.statusCode, 202)
  t.equal(subscribed.json().confirmed, false)
  const confirmation = await until('the confirmation e-mail', () =>
    smtp.received.find((mail) => mail.envelopeTo.includes('fan@example.com')),
  )
  const link = /https?:\/\/\S+\/subscribers\/confirm\?token=[\w-]+/.exec(confirmation.text)?.[0]
  t.ok(link, 'the message holds a confirmation link')
  t.notOk(confirmation.headers['list-unsubscribe'], 'nothing to leave before the subscription is confirmed')

  const hook = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    payload: { url: `${receiver.url}/status`, componentIds: [web.id] },
  })
  t.equal(hook.statusCode, 201)
  const secret = hook.json().secret as string
  t.match(secret, /^whsec_/)
  const unknown = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    payload: { email: 'x@example.com', componentIds: [page.id] },
  })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /componentIds\/0/)

  // Before the link is followed nothing but the confirmation goes to the address.
  const first = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'Web down',
      body: 'Down',
      impact: 'critical',
      components: [{ componentId: web.id, status: 'major_outage' }],
    })
  ).json()
  const delivery = await until('the webhook notification', () => receiver.received.find((entry) => entry.path === '/status'))
  const event = new Webhook(secret).verify(delivery.raw, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  }) as { type: string; data: { incident: { id: string }; page: { status_indicator: string }; meta: { unsubscribe: string } } }
  t.equal(event.type, 'incident.created')
  t.equal(event.data.incident.id, first.id)
  t.equal(event.data.page.status_indicator, 'critical')
  t.equal(smtp.received.filter((mail) => mail.envelopeTo.includes('fan@example.com')).length, 1)

  const confirmed = await app.inject({ method: 'GET', url: new URL(link!).pathname + new URL(link!).search })
  t.equal(confirmed.statusCode, 200)
  t.match(confirmed.body, /Subscribed/)
  await call(responder!, 'POST', `${pageBase}/incidents/${first.id}/updates`, { body: 'Back up', status: 'resolved' })
  const update = await until('the update e-mail', () =>
    smtp.received.find((mail) => mail.envelopeTo.includes('fan@example.com') && /Web down/.test(mail.subject)),
  )
  t.match(update.subject, /\[Acme\] Web down: Resolved/)
  const unsubscribeLink = /https?:\/\/\S+\/subscribers\/unsubscribe\?token=[\w-]+/.exec(update.text)?.[0]
  t.ok(unsubscribeLink)
  // The mail client's own button: RFC 2369's header names the footer's link, and RFC 8058's says
  // a POST of `List-Unsubscribe=One-Click` to it is enough.
  t.equal(update.headers['list-unsubscribe'], `<${unsubscribeLink}>`)
  t.equal(update.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click')
  const { pathname, search } = new URL(unsubscribeLink!)
  t.match((await app.inject({ method: 'GET', url: pathname + search })).body, /<form method="post"/)
  const oneClick = () =>
    app.inject({
      method: 'POST',
      url: pathname + search,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })
  t.equal((await oneClick()).statusCode, 200)
  t.equal((await oneClick()).statusCode, 404, 'a token works once')
  const listed = (await call(viewer!, 'GET', `${pageBase}/subscribers`)).json()
  t.same(
    listed.data.map((row: { kind: string }) => row.kind),
    ['webhook'],
  )
  t.notOk(JSON.stringify(listed).includes('whsec_'), 'secrets are never listed')

  await call(manager!, 'PATCH', pageBase, { allowSubscribers: false })
  const closed = await app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload: { email: 'late@example.com' } })
  t.equal(closed.statusCode, 400)
  t.match(closed.json().message, /email/)
  await call(manager!, 'PATCH', pageBase, { allowSubscribers: true })
})

t.test('Slack and Teams channels subscribe by their incoming webhook URL, get each update as a card, and can leave', async (t) => {
  const slackPath = '/services/T0001/B0001/slack-secret-path'
  const teamsPath = '/workflows/teams-secret-path/triggers/manual/paths/invoke'
  const slack = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    payload: { url: `${receiver.url}${slackPath}`, kind: 'slack' },
  })
  t.equal(slack.statusCode, 201)
  t.match(slack.json(), { kind: 'slack', confirmed: true })
  t.notOk('secret' in slack.json(), 'a channel’s URL is its own credential: there is nothing to sign with')
  const again = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    payload: { url: `${receiver.url}${slackPath}`, kind: 'slack' },
  })
  t.equal(again.statusCode, 409)
  const teams = await call(manager!, 'POST', `${pageBase}/subscribers`, {
    url: `${receiver.url}${teamsPath}`,
    kind: 'teams',
    componentIds: [api.id],
  })
  t.equal(teams.statusCode, 201)
  t.match(teams.json(), { kind: 'teams', url: `${receiver.url}${teamsPath}`, componentIds: [api.id], confirmed: true })
  const noSms = await app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload: { phone: '+14155550100' } })
  t.equal(noSms.statusCode, 400, 'no number is taken where no text can be sent (this service has no Twilio)')
  t.match(noSms.json().message, /phone.*Twilio/)
  const badKind = await call(manager!, 'POST', `${pageBase}/subscribers`, { url: `${receiver.url}/x`, kind: 'discord' })
  t.equal(badKind.statusCode, 400)
  t.match(badKind.json().message, /kind/)

  const incident = (
    await call(manager!, 'POST', `${pageBase}/incidents`, {
      name: 'API <errors> & timeouts',
      body: 'We are looking into *rising* errors.',
      impact: 'major',
      components: [{ componentId: api.id, status: 'partial_outage' }],
    })
  ).json()
  const slackPost = await until('the Slack post', () => receiver.received.find((entry) => entry.path === slackPath))
  t.notOk(slackPost.headers['webhook-signature'], 'posted unsigned, as incoming webhooks take it')
  const slackBody = slackPost.body as { text: string; blocks: Array<Record<string, unknown>> }
  t.equal(slackBody.text, '[Acme] API <errors> & timeouts: Investigating', 'the notification’s text')
  t.same(slackBody.blocks[0], { type: 'header', text: { type: 'plain_text', text: 'API <errors> & timeouts' } })
  t.same(slackBody.blocks[1], {
    type: 'section',
    text: { type: 'mrkdwn', text: '*Investigating*: We are looking into *rising* errors.' },
  })
  t.match(JSON.stringify(slackBody.blocks[2]), /Components: Public API \(Partial Outage\)/)
  const [pageButton, leaveButton] = (slackBody.blocks[3] as { elements: Array<{ text: { text: string }; url: string }> }).elements
  t.equal(pageButton!.text.text, 'Acme')
  t.match(pageButton!.url, /\/public\/acme\/$/)
  t.equal(leaveButton!.text.text, 'Unsubscribe')
  t.match(leaveButton!.url, /\/subscribers\/unsubscribe\?token=[\w-]+$/)

  const teamsPost = await until('the Teams post', () => receiver.received.find((entry) => entry.path === teamsPath))
  const card = (teamsPost.body as { type: string; attachments: Array<{ contentType: string; content: Record<string, unknown> }> })
    .attachments[0]!
  t.equal((teamsPost.body as { type: string }).type, 'message')
  t.equal(card.contentType, 'application/vnd.microsoft.card.adaptive')
  t.match(card.content, {
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'TextBlock', text: 'API <errors> & timeouts', weight: 'Bolder' },
      { type: 'TextBlock', text: '**Investigating**: We are looking into *rising* errors.' },
      { type: 'TextBlock', text: 'Components: Public API (Partial Outage)', isSubtle: true },
    ],
    actions: [
      { type: 'Action.OpenUrl', title: 'Acme' },
      { type: 'Action.OpenUrl', title: 'Unsubscribe' },
    ],
  })

  const read = new AdaptiveCards.AdaptiveCard()
  const reading = new AdaptiveCards.SerializationContext()
  read.parse(card.content, reading)
  t.same(
    Array.from({ length: reading.eventCount }, (_, index) => reading.getEventAt(index).message),
    [],
    'Microsoft’s Adaptive Cards SDK reads the card without a complaint',
  )
  t.same(
    read.validateProperties().validationEvents.map((event) => event.message),
    [],
    'and finds every required property set',
  )
  t.same(read.toJSON(), card.content, 'every property is one the SDK knows')

  // Slack unfurls links by fetching them: the button's page asks, a POST leaves.
  const { pathname, search } = new URL(leaveButton!.url)
  t.match((await app.inject({ method: 'GET', url: pathname + search })).body, /<form method="post"/)
  t.equal((await app.inject({ method: 'POST', url: pathname + search })).statusCode, 200)
  const listed = (await call(viewer!, 'GET', `${pageBase}/subscribers`)).json()
  t.notOk(
    listed.data.some((row: { kind: string }) => row.kind === 'slack'),
    'the Slack channel left',
  )
  await call(manager!, 'POST', `${pageBase}/incidents/${incident.id}/updates`, { body: 'Fixed', status: 'resolved' })
  await until('the Teams post of the resolution', () =>
    receiver.received.find((entry) => entry.path === teamsPath && /Resolved/.test(entry.raw)),
  )
  t.equal(receiver.received.filter((entry) => entry.path === slackPath).length, 1, 'nothing more went to the channel that left')
  t.equal((await call(manager!, 'DELETE', `${pageBase}/subscribers/${teams.json().id}`)).statusCode, 204)
})

t.test('the subscription form works without JavaScript', async (t) => {
  const answer = await app.inject({
    method: 'POST',
    url: `${publicBase}/subscribers`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'email=form%40example.com',
  })
  t.equal(answer.statusCode, 202)
  t.match(answer.headers['content-type'], /text\/html/)
  t.match(answer.body, /confirmation link/)
})

t.test("the platform lists the organization's status pages through this surface's read", async (t) => {
  const platform = await buildPlatform(service.config, service.resources)
  t.teardown(() => platform.close())
  const listed = await platform.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/status-pages`, headers: viewer!.headers })
  t.equal(listed.statusCode, 200)
  t.match(listed.json(), { data: [{ id: page.id, slug: 'acme', published: true }], meta: { total: 1 } })
  t.equal(
    (await platform.inject({ method: 'GET', url: `/api/v1/organizations/${otherOrgId}/status-pages`, headers: viewer!.headers }))
      .statusCode,
    404,
  )
})

t.test('status page incidents are incident references: RCA search finds them and RCAs link them', async (t) => {
  const owner = person('owner')
  const found = await call(owner, 'GET', `/api/v1/organizations/${orgId}/rcas/search-incidents?q=elevated%20api&sourceProduct=statuspages`)
  t.equal(found.statusCode, 200)
  t.match(found.json().data, [
    { sourceProduct: 'statuspages', incidentId, title: 'Elevated API errors', priority: 'major', status: 'resolved' },
  ])
  const everywhere = (await call(owner, 'GET', `/api/v1/organizations/${orgId}/rcas/search-incidents?limit=2&page=2`)).json()
  t.ok(everywhere.meta.total >= 4, 'alerts and status page incidents are counted together')
  t.equal(everywhere.data.length, 2)
  const viewersSearch = (await call(viewer!, 'GET', `/api/v1/organizations/${orgId}/rcas/search-incidents?q=elevated`)).json()
  t.equal(viewersSearch.data.length, 1, 'a statuspages viewer finds status page incidents')

  const rca = (await call(owner, 'POST', `/api/v1/organizations/${orgId}/rcas`, { title: 'API errors' })).json()
  const link = await call(owner, 'POST', `/api/v1/organizations/${orgId}/rcas/${rca.id}/incidents`, {
    sourceProduct: 'statuspages',
    incidentId,
  })
  t.equal(link.statusCode, 201)
  t.match(link.json(), {
    sourceProduct: 'statuspages',
    incidentId,
    incident: { title: 'Elevated API errors', priority: 'major', status: 'resolved' },
  })
  const missing = await call(owner, 'POST', `/api/v1/organizations/${orgId}/rcas/${rca.id}/incidents`, {
    sourceProduct: 'statuspages',
    incidentId: '00000000-0000-4000-8000-000000000000',
  })
  t.equal(missing.statusCode, 404)
})

t.test('a workflow keeps a draft incident on the pages linked to an alert’s service, and resolves it with the alert', async (t) => {
  const owner = person('owner')
  const alerting = `/api/v1/organizations/${orgId}`
  const config = (await call(owner, 'POST', `${alerting}/webhooks`, { name: 'Monitoring' })).json()
  for (const trigger of ['alert.created', 'alert.acknowledged', 'alert.resolved']) {
    const created = await call(owner, 'POST', `${alerting}/workflows`, {
      name: `Status page on ${trigger}`,
      trigger,
      actions: [{ type: 'update_status_page', componentStatus: 'partial_outage' }],
    })
    t.equal(created.statusCode, 201, trigger)
  }
  const refused = await call(owner, 'POST', `${alerting}/workflows`, {
    name: 'On deploys',
    trigger: 'deploy.recorded',
    actions: [{ type: 'update_status_page' }],
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /actions\/0\/type/)

  const ingested = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: { title: 'API latency high', service: 'api', priority: 'P2' },
  })
  const alertId = ingested.json().alertId as string
  const followed = async () =>
    (await db
      .selectFrom('divinux.statusIncidents')
      .select(['id', 'name', 'status', 'published', 'impact'])
      .where('alertId', '=', alertId)
      .executeTakeFirst()) ?? undefined
  const draft = await until('the draft incident', followed)
  t.match(draft, { name: 'Partial outage affecting Public API', status: 'investigating', published: false, impact: 'major' })
  t.equal(await statusOf(api), 'operational', 'a draft moves no component')
  const read = (await call(viewer!, 'GET', `${pageBase}/incidents/${draft.id}`)).json()
  t.same(read.components, [{ componentId: api.id, status: 'partial_outage' }])
  t.match(
    read.updates,
    [{ body: /^We are investigating problems affecting Public API\./ }],
    'the internal alert title "API latency high" stays inside',
  )
  const unresolved = (await publicGet(`${publicBase}/api/v2/incidents/unresolved.json`)).json().incidents as Array<{ id: string }>
  t.notOk(
    unresolved.some((incident) => incident.id === draft.id),
    'nothing public without a person',
  )

  await call(owner, 'POST', `${alerting}/alerts/${alertId}/acknowledge`)
  await until('the incident to be identified', async () => (await followed())?.status === 'identified')
  await call(manager!, 'PATCH', `${pageBase}/incidents/${draft.id}`, { published: true })
  t.equal(await statusOf(api), 'partial_outage', 'published by a person, it moves its components')
  await call(owner, 'POST', `${alerting}/alerts/${alertId}/resolve`)
  await until('the incident to resolve with the alert', async () => (await followed())?.status === 'resolved')
  t.equal(await statusOf(api), 'operational')
  const runs = await db.selectFrom('divinux.workflowRuns').select(['status']).execute()
  t.ok(
    runs.every((run) => run.status === 'succeeded' || run.status === 'skipped'),
    JSON.stringify(runs),
  )
})

t.test('an analysis of a status page incident reads its updates as the timeline', async (t) => {
  const owner = person('owner')
  const requested = await call(owner, 'POST', `/api/v1/organizations/${orgId}/insights`, { incidentId, sourceProduct: 'statuspages' })
  t.equal(requested.statusCode, 202)
  const analysisId = requested.json().id as string
  const done = await until('the analysis', async () => {
    const body = (await call(owner, 'GET', `/api/v1/organizations/${orgId}/insights/${analysisId}`)).json()
    return body.status === 'completed' || body.status === 'failed' ? body : undefined
  })
  t.equal(done.status, 'completed')
  const evidence = await db.selectFrom('divinux.analyses').select(['evidence']).where('id', '=', analysisId).executeTakeFirstOrThrow()
  t.match(JSON.stringify(evidence.evidence), /We are investigating elevated error rates\./)
})

t.test('a confirmation link is sent again to an unconfirmed address at most every ten minutes', async (t) => {
  const mails = () => smtp.received.filter((mail) => mail.envelopeTo.includes('again@example.com')).length
  const subscribe = () => app.inject({ method: 'POST', url: `${publicBase}/subscribers`, payload: { email: 'again@example.com' } })
  t.equal((await subscribe()).statusCode, 202)
  await until('the first confirmation', () => mails() === 1)
  t.equal((await subscribe()).statusCode, 202, 'the same answer')
  t.equal((await subscribe()).statusCode, 202)
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ confirmationSentAt: new Date(Date.now() - 11 * 60_000) })
    .where('email', '=', 'again@example.com')
    .execute()
  t.equal((await subscribe()).statusCode, 202)
  await until('the second confirmation', () => mails() === 2)
  // The window starts again from the second link: asking at once sends nothing more.
  t.equal((await subscribe()).statusCode, 202)
  t.equal((await subscribe()).statusCode, 202)
  // A link is queued in the outbox by the request that asks for it: two rows, so two mails ever.
  const queued = await db
    .selectFrom('core.outbox')
    .select('id')
    .where('kind', '=', 'statuspage.subscription_confirmation')
    .where('recipient', '=', 'again@example.com')
    .execute()
  t.equal(queued.length, 2, 'two links in all: the limit holds in every window, not only the first')
  t.equal(mails(), 2)
})

t.test('the public form is capped: confirmations waiting per page, anonymous webhooks per address and per page', async (t) => {
  const capped = (await call(manager!, 'POST', `${base}/pages`, { name: 'Capped', slug: 'capped', published: true })).json()
  const cappedBase = '/api/v1/statuspages/public/capped'
  const subscribe = (payload: object, ip = '203.0.113.7') =>
    app.inject({ method: 'POST', url: `${cappedBase}/subscribers`, payload, remoteAddress: ip })
  // 200 addresses typed in today, none confirmed.
  await db
    .insertInto('divinux.statusSubscribers')
    .values(
      Array.from({ length: 200 }, (_, index) => ({
        organizationId: orgId,
        pageId: capped.id,
        kind: 'email',
        email: `typed-${index}@example.com`,
        componentIds: [],
        confirmTokenHash: `hash-${index}`,
        unsubscribeToken: `unsubscribe-${index}`,
        confirmationSentAt: new Date(),
      })),
    )
    .execute()
  const flooded = await subscribe({ email: 'one-more@example.com' })
  t.equal(flooded.statusCode, 429)
  t.match(flooded.json().message, /too many subscriptions waiting for their confirmation/)

  const hooks = []
  for (let index = 0; index < 5; index++) hooks.push(await subscribe({ url: `${receiver.url}/anon-${index}` }))
  t.same(
    hooks.map((hook) => hook.statusCode),
    [201, 201, 201, 201, 201],
  )
  const sixth = await subscribe({ url: `${receiver.url}/anon-6`, kind: 'slack' })
  t.equal(sixth.statusCode, 429, 'a sixth from the same address in a day, a Slack channel as well as a webhook')
  t.match(sixth.json().message, /at most 5 webhook subscriptions a day from one address/)
  t.equal((await subscribe({ url: `${receiver.url}/anon-7` }, '198.51.100.20')).statusCode, 201, 'another address may')
  const managed = await call(manager!, 'POST', `${base}/pages/${capped.id}/subscribers`, { url: `${receiver.url}/managed-hook` })
  t.equal(managed.statusCode, 201, 'a manager is not held to the public caps')
  const stored = await db
    .selectFrom('divinux.statusSubscribers')
    .select(['url', 'createdFrom'])
    .where('pageId', '=', capped.id)
    .where('kind', '=', 'webhook')
    .execute()
  t.equal(stored.length, 7, 'the refused ones were not stored')
  t.equal(stored.find((row) => row.url === `${receiver.url}/managed-hook`)?.createdFrom, null)

  // The page's cap: 100 anonymous webhooks from anywhere.
  await db
    .updateTable('divinux.statusSubscribers')
    .set({ createdAt: new Date(Date.now() - 2 * 86_400_000) })
    .where('pageId', '=', capped.id)
    .execute()
  await db
    .insertInto('divinux.statusSubscribers')
    .values(
      Array.from({ length: 94 }, (_, index) => ({
        organizationId: orgId,
        pageId: capped.id,
        kind: 'webhook',
        url: `https://hooks.example/${index}`,
        secret: 'whsec_x',
        componentIds: [],
        confirmTokenHash: null,
        unsubscribeToken: `hook-unsubscribe-${index}`,
        confirmedAt: new Date(),
        createdFrom: `192.0.2.${index}`,
      })),
    )
    .execute()
  const full = await subscribe({ url: `${receiver.url}/anon-full` }, '198.51.100.99')
  t.equal(full.statusCode, 429)
  t.match(full.json().message, /takes no more webhook subscribers from its public form/)
})
