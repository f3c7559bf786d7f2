import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// The incident is the subject of insights (decision 0019, "One incident everywhere"). An RCA links
// INC-n as a kind of its own, finds it by search, says which kinds an unknown id may name, and
// drafts from the incident (its people, its latest analysis), counting the incident once however
// many of its parts are linked; nothing linked, nothing drafted. An analysis asked for an alert of
// an incident is the incident's, and both command rooms show the latest of either.

const service = await startTestService(t, buildApp, {})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'rca-incidents', {
  ada: { alerting: 'responder', statuspages: 'manager', insights: 'responder' },
  viewer: { alerting: 'viewer', statuspages: 'viewer', insights: 'viewer' },
})
const [owner, ada, viewer] = ['owner', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
const rcasUrl = `${base}/rcas`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

// Ada is paged by e-mail for checkout; the status page follows checkout.
const pages = `/api/v1/statuspages/organizations/${orgId}`
const page = (await call(ada!, 'POST', `${pages}/pages`, { name: 'Acme', slug: 'acme-rca-incidents', published: true })).json()
await call(ada!, 'POST', `${pages}/pages/${page.id}/components`, { name: 'Checkout', alertServices: ['checkout'] })
const policy = (
  await call(owner!, 'POST', `${base}/escalation-policies`, {
    name: 'Checkout',
    steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] }],
  })
).json()
const config = (await call(owner!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })).json()
await db
  .insertInto('divinux.deployEvents')
  .values({
    organizationId: orgId,
    service: 'checkout',
    version: '2.4.1',
    source: 'generic',
    status: 'success',
    deployedAt: new Date(Date.now() - 10 * 60_000),
  })
  .execute()

const fired = await app.inject({
  method: 'POST',
  url: config.ingestPath,
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify({ title: 'Checkout 500s', service: 'checkout', priority: 'P1' }),
})
const alertId = fired.json().alertId as string
const opened = await until('the incident the P1 opens', async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident)
const incident = (await call(viewer!, 'GET', `${base}/incidents/${opened.id}`)).json() as { id: string; number: number }
await until('Ada paged', async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}/notifications`)).json().data.length > 0)
const acknowledged = await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)
if (acknowledged.statusCode !== 200) throw new Error(`Ada could not acknowledge: ${acknowledged.body}`)
await call(ada!, 'POST', `${base}/incidents/${incident.id}/status-updates`, {
  status: 'investigating',
  body: 'Payments fail.',
  publish: true,
})
const statusIncident = await until('the status page incident', async () => {
  const links = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/links`)).json()
  return links.statusPageIncidents[0] as { id: string } | undefined
})

// The P1's own analysis runs first; then two more: an early one of the alert that found no cause,
// and the latest, of the incident, that named the deploy.
await until('the P1’s automatic analysis', async () => {
  const rows = await db.selectFrom('divinux.analyses').select('status').where('organizationId', '=', orgId).execute()
  return rows.length > 0 && rows.every((row) => row.status === 'completed' || row.status === 'failed')
})
const analysis = (incidentId: string, rootCause: string, minutesAgo: number) => ({
  organizationId: orgId,
  sourceProduct: 'alerting',
  incidentId,
  trigger: 'manual',
  status: 'completed',
  rootCause,
  completedAt: new Date(Date.now() - minutesAgo * 60_000),
})
await db
  .insertInto('divinux.analyses')
  .values([
    analysis(alertId, 'No deploy before the alert points at it.', 60),
    analysis(incident.id, 'The deploy 2.4.1 of checkout broke the payment path (confidence 0.97).', 0),
  ])
  .execute()

async function drafted(rcaId: string) {
  return until(`the draft of ${rcaId}`, async () => {
    const rca = (await call(viewer!, 'GET', `${rcasUrl}/${rcaId}`)).json()
    return (rca.draftStatus === 'completed' || rca.draftStatus === 'failed') && rca
  })
}

t.test('an RCA links an incident as INC-n, found by search; an unknown id is told the kinds it may name', async (t) => {
  const rca = (await call(ada!, 'POST', rcasUrl, { title: 'Checkout outage' })).json()
  const url = `${rcasUrl}/${rca.id}/incidents`
  const linked = await call(ada!, 'POST', url, { sourceProduct: 'alerting', incidentId: incident.id })
  t.equal(linked.statusCode, 201)
  t.match(linked.json(), {
    sourceProduct: 'alerting',
    incidentId: incident.id,
    incident: { kind: 'incident', reference: `INC-${incident.number}`, title: 'Checkout 500s', priority: 'SEV1', service: 'checkout' },
  })
  const alertLink = (await call(ada!, 'POST', url, { sourceProduct: 'alerting', incidentId: alertId })).json()
  t.match(alertLink.incident, { kind: 'alert', reference: 'Checkout 500s', priority: 'P1' })
  const statusLink = (await call(ada!, 'POST', url, { sourceProduct: 'statuspages', incidentId: statusIncident.id })).json()
  t.match(statusLink.incident, { kind: 'status_incident' })

  const unknown = await call(ada!, 'POST', url, { sourceProduct: 'alerting', incidentId: '00000000-0000-4000-8000-000000000001' })
  t.equal(unknown.statusCode, 404)
  t.match(
    unknown.json().message,
    /with sourceProduct alerting the id names an incident \(INC-n\) or an alert, with statuspages a status page incident/,
  )

  const found = (await call(viewer!, 'GET', `${rcasUrl}/search-incidents?q=checkout%20500s`)).json()
  t.match(
    found.data.find((row: { kind: string }) => row.kind === 'incident'),
    { sourceProduct: 'alerting', incidentId: incident.id, reference: `INC-${incident.number}`, priority: 'SEV1', service: 'checkout' },
    'search finds the incident itself',
  )
  t.ok(
    found.data.some((row: { kind: string; incidentId: string }) => row.kind === 'alert' && row.incidentId === alertId),
    'and its alert, as an alert',
  )
})

t.test('a draft is written from the incident once, with who was paged and who acknowledged, and its latest analysis', async (t) => {
  const rca = (await call(ada!, 'POST', rcasUrl, { title: 'Checkout outage, drafted' })).json()
  const url = `${rcasUrl}/${rca.id}/incidents`
  for (const link of [
    { sourceProduct: 'alerting', incidentId: incident.id },
    { sourceProduct: 'alerting', incidentId: alertId },
    { sourceProduct: 'statuspages', incidentId: statusIncident.id },
  ])
    t.equal((await call(ada!, 'POST', url, link)).statusCode, 201)
  t.equal((await call(ada!, 'POST', `${rcasUrl}/${rca.id}/generate`)).statusCode, 202)
  const done = await drafted(rca.id)
  t.equal(done.draftStatus, 'completed')
  const reference = `INC-${incident.number}`
  t.match(
    done.summary,
    new RegExp(`^One incident on checkout: ${reference} "Checkout 500s" \\(SEV1\\)`),
    'its alert and status page incident are parts of it',
  )
  t.match(done.impact, /Paged: ada@rca-incidents\.example \(email[a-z, ]*\)\./)
  t.match(done.impact, /Acknowledged by ada@rca-incidents\.example (less than a minute|\d+ minutes?) after it began\./)
  t.match(done.rootCause, /^The deploy 2\.4\.1 of checkout finished \d+ minutes before the first incident began\./)
  t.match(done.rootCause, 'The deploy 2.4.1 of checkout broke the payment path (confidence 0.97).', 'the latest analysis')
  t.notMatch(done.rootCause, 'No deploy before the alert points at it', 'not an older one')
  t.match(done.timeline, new RegExp(`${reference}: paged \\(ada@rca-incidents\\.example \\(email[a-z, ]*\\)\\)`))
  t.match(done.timeline, `${reference}: alert acknowledged (ada@rca-incidents.example)`)
  t.equal(
    done.timeline.split('\n').filter((line: string) => line.includes('Payments fail')).length,
    0,
    'the status page is not a second incident',
  )
})

t.test('an RCA with nothing linked is not drafted: the 409 says what to link', async (t) => {
  const rca = (await call(ada!, 'POST', rcasUrl, { title: 'Empty' })).json()
  const refused = await call(ada!, 'POST', `${rcasUrl}/${rca.id}/generate`)
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 'CONFLICT', message: /^no incident is linked to this RCA: link the incident it explains/ })
  t.match(
    (await call(viewer!, 'GET', `${rcasUrl}/${rca.id}`)).json(),
    { draftStatus: null, summary: null },
    'nothing queued, nothing written',
  )
})

t.test('an analysis asked for an alert of an incident is the incident’s; both command rooms show it', async (t) => {
  const insights = `${base}/insights`
  // An analysis of the incident someone's worker is processing right now.
  const active = await db
    .insertInto('divinux.analyses')
    .values({ organizationId: orgId, sourceProduct: 'alerting', incidentId: incident.id, trigger: 'manual', status: 'processing' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const refused = await call(ada!, 'POST', insights, { sourceProduct: 'alerting', incidentId: alertId })
  t.equal(refused.statusCode, 409, 'one active analysis per incident, whichever id the caller knew')
  t.match(refused.json().message, active.id)
  await db.updateTable('divinux.analyses').set({ status: 'failed' }).where('id', '=', active.id).execute()

  const asked = await call(ada!, 'POST', insights, { sourceProduct: 'alerting', incidentId: alertId })
  t.equal(asked.statusCode, 202)
  t.match(asked.json(), { sourceProduct: 'alerting', incidentId: incident.id }, 'kept under the incident')
  const alertRoom = (await call(viewer!, 'GET', `${base}/alerts/${alertId}/command-room`)).json()
  t.equal(alertRoom.analysis?.id, asked.json().id, 'the alert’s room shows its incident’s analysis')
  const incidentRoom = (await call(viewer!, 'GET', `${base}/incidents/${incident.id}/command-room`)).json()
  t.equal(incidentRoom.analysis?.id, asked.json().id, 'and so does the incident’s')
})
