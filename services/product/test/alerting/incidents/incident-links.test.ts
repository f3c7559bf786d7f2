import { sql } from 'kysely'
import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// What an incident links to (decision 0019, "Links"): its failing checks, the status page
// incidents about it (opened by its published status updates, following its alerts, or put in it
// by correlation), deploys before it and RCA documents, each read from the surface that owns it.

const service = await startTestService(t, buildApp, {})
const { app } = service
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'links', {
  ada: { alerting: 'responder', statuspages: 'manager', insights: 'responder' },
  viewer: { alerting: 'viewer' },
  bo: { alerting: 'responder', statuspages: 'responder' },
})
const [owner, ada, viewer, stranger, bo] = ['owner', 'ada', 'viewer', 'stranger', 'bo'].map(person)
const base = `/api/v1/organizations/${orgId}`
const pages = `/api/v1/statuspages/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const page = (await call(ada!, 'POST', `${pages}/pages`, { name: 'Acme', slug: 'acme-links', published: true })).json()
const checkoutComponent = (
  await call(ada!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Checkout', alertServices: ['checkout'] })
).json()
const config = (await call(owner!, 'POST', `${base}/webhooks`, { name: 'Monitoring' })).json()
const fire = async (event: object) =>
  (
    await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(event),
    })
  ).json().alertId as string

type Links = {
  statusPageIncidents: Array<{ id: string; name: string; status: string; published: boolean; via: string; link: { rule: string } | null }>
  deploys: Array<{ service: string }>
  rcaDocuments: Array<{ id: string; title: string }>
  checks: unknown[]
}
const linksOf = async (incidentId: string): Promise<Links> => (await call(viewer!, 'GET', `${base}/incidents/${incidentId}/links`)).json()

t.test('an incident’s status updates are published on the pages that follow its services', async (t) => {
  // Deploy events are ingestion's to write (its own tests cover it); here one is written as ingestion writes it.
  await app.database.db
    .insertInto('divinux.deployEvents')
    .values({
      organizationId: orgId,
      service: 'checkout',
      version: '2.4.1',
      source: 'generic',
      status: 'success',
      deployedAt: new Date(Date.now() - 60_000),
    })
    .execute()
  const alertId = await fire({ title: 'Checkout 500s', service: 'checkout', priority: 'P1' })
  const incident = await until(
    'the incident the P1 opens',
    async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
  )
  const url = `${base}/incidents/${incident.id}`

  const update = await call(ada!, 'POST', `${url}/status-updates`, { status: 'investigating', body: 'Some payments fail; we are on it.' })
  t.equal(update.statusCode, 201)
  t.match(update.json(), {
    kind: 'status_update',
    body: 'Some payments fail; we are on it.',
    data: { statusPages: { status: 'investigating', publish: false } },
  })
  const opened = await until('the status page incident', async () => (await linksOf(incident.id)).statusPageIncidents[0])
  // The public reads the page's own component, never the internal title "Checkout 500s".
  t.match(opened, { name: 'Outage affecting Checkout', status: 'investigating', published: false, via: 'incident', link: null })
  const onPage = (await call(ada!, 'GET', `${pages}/pages/${page.id}/incidents/${opened.id}`)).json()
  t.match(onPage, { impact: 'critical', components: [{ componentId: checkoutComponent.id, status: 'major_outage' }] })

  await call(ada!, 'POST', `${url}/status-updates`, { status: 'identified', body: 'A bad deploy; rolling back.' })
  await until('the status page incident updated', async () => (await linksOf(incident.id)).statusPageIncidents[0]?.status === 'identified')
  const updates = (await call(ada!, 'GET', `${pages}/pages/${page.id}/incidents/${opened.id}/updates`)).json().data as Array<{
    body: string
  }>
  t.same(
    updates.map((entry) => entry.body),
    ['A bad deploy; rolling back.', 'Some payments fail; we are on it.'],
    'one status page incident, its updates in turn',
  )

  const links = await linksOf(incident.id)
  t.match(links.deploys, [{ service: 'checkout', version: '2.4.1' }], 'the deploy before it')
  t.same(links.checks, [])

  const rca = (await call(ada!, 'POST', `${base}/rcas`, { title: 'Checkout outage' })).json()
  t.equal(
    (await call(ada!, 'POST', `${base}/rcas/${rca.id}/incidents`, { sourceProduct: 'alerting', incidentId: alertId })).statusCode,
    201,
  )
  t.match((await linksOf(incident.id)).rcaDocuments, [{ id: rca.id, title: 'Checkout outage' }], 'an RCA of its alert')

  const audit = await app.database.db.selectFrom('core.auditLogs').select('action').where('entityId', '=', incident.id).execute()
  t.ok(audit.some((entry) => entry.action === 'incident.status_update_published'))
  t.equal((await call(viewer!, 'POST', `${url}/status-updates`, { status: 'resolved', body: 'x' })).statusCode, 403)
  // Publishing to status pages needs the role the status pages API asks for the same: manager.
  const timeline = () => app.database.db.selectFrom('divinux.incidentTimeline').select('id').where('incidentId', '=', incident.id).execute()
  const before = await timeline()
  const notManager = await call(bo!, 'POST', `${url}/status-updates`, { status: 'resolved', body: 'All good!', publish: true })
  t.equal(notManager.statusCode, 403)
  t.match(notManager.json().message, /statuspages role manager/)
  t.same(await timeline(), before, 'nothing recorded, nothing sent to the status pages')
  // draftOf cites an analysis: only one of this organization (none of another, none that does not exist).
  const foreignDraft = await call(ada!, 'POST', `${url}/status-updates`, {
    status: 'resolved',
    body: 'Fine now.',
    draftOf: '00000000-0000-4000-8000-000000000000',
  })
  t.equal(foreignDraft.statusCode, 400)
  t.match(foreignDraft.json().message, /draftOf is not an analysis of the organization/)
  t.same(await timeline(), before)
  t.equal((await call(stranger!, 'GET', `/api/v1/organizations/${otherOrgId}/incidents/${incident.id}/links`)).statusCode, 404)

  await call(ada!, 'POST', `${url}/status-updates`, { status: 'resolved', body: 'Payments work again.' })
  await until('the status page incident resolved', async () => (await linksOf(incident.id)).statusPageIncidents[0]?.status === 'resolved')
})

t.test('a status page incident a person opens joins the open incident of its component’s service', async (t) => {
  const alertId = await fire({ title: 'Search timeouts', service: 'search', priority: 'P2' })
  const incident = await until(
    'the incident the P2 opens',
    async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
  )
  const searchComponent = (
    await call(ada!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Search', alertServices: ['search'] })
  ).json()
  const byHand = await call(ada!, 'POST', `${pages}/pages/${page.id}/incidents`, {
    name: 'Search is slow',
    body: 'Searches take long.',
    components: [{ componentId: searchComponent.id, status: 'degraded_performance' }],
  })
  t.equal(byHand.statusCode, 201)
  const joined = await until('the status page incident linked', async () =>
    (await linksOf(incident.id)).statusPageIncidents.find((row) => row.id === byHand.json().id),
  )
  t.match(joined, { via: 'correlation', link: { rule: 'service', matched: { service: 'search' } } })
  const timeline = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/timeline`)).json().data as Array<{
    kind: string
    authorId: string | null
  }>
  t.match(
    timeline.find((entry) => entry.kind === 'status_page_incident_linked'),
    { authorId: null },
  )

  await call(ada!, 'POST', `${base}/incidents/${incident.id}/status-updates`, { status: 'monitoring', body: 'A fix is out.' })
  await until('the linked status page incident updated', async () => {
    const row = (await linksOf(incident.id)).statusPageIncidents.find((candidate) => candidate.id === byHand.json().id)
    return row?.status === 'monitoring'
  })
  t.equal(
    (await linksOf(incident.id)).statusPageIncidents.length,
    1,
    'the page already tells of the incident: no second status page incident is opened',
  )

  const unrelated = await call(ada!, 'POST', `${pages}/pages/${page.id}/incidents`, { name: 'Website maintenance note', body: 'x' })
  t.equal(unrelated.statusCode, 201)
  // Alerting reads each opened status page incident from its queue (`alerting.status-incident-opened`).
  await until('alerting to have read the unrelated status page incident', async () => {
    const { rows } = await sql<{ state: string }>`
      select state from pgboss.job
      where name = 'alerting.status-incident-opened' and data ->> 'statusIncidentId' = ${unrelated.json().id}`.execute(app.database.db)
    return rows[0]?.state === 'completed'
  })
  t.notOk(
    (await linksOf(incident.id)).statusPageIncidents.some((row) => row.id === unrelated.json().id),
    'without a followed service nothing joins',
  )
})

t.test('resolving the incident resolves its status page incident: the page turns green, subscribers told', async (t) => {
  const payments = (
    await call(ada!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Payments', alertServices: ['payments'] })
  ).json()
  const summary = async () => (await app.inject({ method: 'GET', url: '/api/v1/statuspages/public/acme-links/api/v2/summary.json' })).json()
  const alertId = await fire({ title: 'Payments declined', service: 'payments', priority: 'P1', fingerprint: 'payments' })
  const incident = await until('the incident', async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident)
  const url = `${base}/incidents/${incident.id}`
  const named = await call(ada!, 'POST', `${url}/status-updates`, {
    status: 'investigating',
    body: 'Card payments fail.',
    name: 'Card payments failing',
    publish: true,
  })
  t.match(named.json(), { data: { statusPages: { name: 'Card payments failing' } } })
  const opened = await until('the published status page incident', async () =>
    (await linksOf(incident.id)).statusPageIncidents.find((found) => found.published && found.status === 'investigating'),
  )
  t.equal(opened.name, 'Card payments failing', 'the name the responder gave')
  await until('the page to go red', async () =>
    (await summary()).components.some(
      (component: { id: string; status: string }) => component.id === payments.id && component.status === 'major_outage',
    ),
  )

  // The incident is resolved the way responders resolve it: one PATCH, nothing said to the status page.
  t.equal((await call(ada!, 'PATCH', url, { status: 'resolved' })).statusCode, 200)
  await until('the status page incident to resolve', async () =>
    (await linksOf(incident.id)).statusPageIncidents.find((found) => found.id === opened.id && found.status === 'resolved'),
  )
  const after = await summary()
  t.notOk(
    after.incidents.some((open: { id: string }) => open.id === opened.id),
    'the public incident is no longer among the unresolved ones',
  )
  t.match(
    after.components.find((component: { id: string }) => component.id === payments.id),
    { status: 'operational' },
    'the component it held is released',
  )
  const updates = (await call(ada!, 'GET', `${pages}/pages/${page.id}/incidents/${opened.id}/updates`)).json().data
  t.match(
    updates[0],
    { status: 'resolved', body: 'This incident has been resolved.' },
    'a published resolved update, as Statuspage words it',
  )
})

t.test('the catalog decides which components an incident proposes: any name of its service, any letter case', async (t) => {
  const registered = await call(owner!, 'POST', `${base}/services`, { key: 'payments', aliases: ['svc-payments'] })
  t.equal(registered.statusCode, 201, registered.body)
  const cardComponent = (
    await call(ada!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Card payments', alertServices: ['SVC-Payments'] })
  ).json()
  const alertId = await fire({ title: 'Card declines', service: 'svc-payments', priority: 'P1' })
  const incident = await until(
    'the incident the P1 opens',
    async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
  )
  await call(ada!, 'POST', `${base}/incidents/${incident.id}/status-updates`, { status: 'investigating', body: 'Some cards are declined.' })
  const opened = await until('the status page incident', async () => (await linksOf(incident.id)).statusPageIncidents[0])
  const onPage = (await call(ada!, 'GET', `${pages}/pages/${page.id}/incidents/${opened.id}`)).json()
  t.equal(onPage.name, 'Outage affecting Payments and Card payments', 'each component following the service')
  t.match(
    onPage.components.find((component: { componentId: string }) => component.componentId === cardComponent.id),
    { status: 'major_outage' },
    'the component following the service by another name and case',
  )
})
