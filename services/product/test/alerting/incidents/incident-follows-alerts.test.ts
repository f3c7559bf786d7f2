import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// The incident follows its alerts (decision 0019, "State flows both ways"): acknowledging an alert
// from any channel acknowledges its incident, and an incident its alerts opened resolves when the
// last of them resolves; each move is one timeline entry naming who and how.
const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'follows', { ada: 'responder', viewer: 'viewer' })
const [owner, ada, viewer] = ['owner', 'ada', 'viewer'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  app.inject({ method, url: `${base}${url}`, headers: who.headers, ...(payload ? { payload } : {}) })

const config = (await call(owner!, 'POST', '/webhooks', { name: 'Follows' })).json() as { ingestPath: string }
async function ingest(event: object): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: config.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: event,
  })
  if (response.statusCode !== 202) throw new Error(`ingest: ${response.statusCode} ${response.body}`)
  return response.json().alertId as string
}
const incidentOf = (alertId: string) =>
  until(
    `alert ${alertId} to be in an incident`,
    async () => ((await call(viewer!, 'GET', `/alerts/${alertId}`)).json().incident ?? undefined) as { id: string } | undefined,
  )
const incident = async (id: string) => (await call(viewer!, 'GET', `/incidents/${id}`)).json()
const timeline = async (id: string) =>
  (await call(viewer!, 'GET', `/incidents/${id}/timeline`)).json().data as Array<{
    kind: string
    authorId: string | null
    data: Record<string, unknown>
  }>
/** Until the bus has handed on every acknowledgement and resolution of the alert. */
const handedOn = (alertId: string) =>
  until(`the moves of ${alertId} to be dispatched`, async () => {
    const waiting = await db
      .selectFrom('divinux.alertEvents')
      .select('id')
      .where('alertId', '=', alertId)
      .where('type', 'in', ['acknowledged', 'resolved'])
      .where('dispatchedAt', 'is', null)
      .execute()
    return waiting.length === 0
  })

t.test('an alert acknowledged by a person acknowledges the incident it opened, naming who and how', async (t) => {
  const alertId = await ingest({ title: 'Checkout down', priority: 'P1', service: 'checkout', fingerprint: 'checkout' })
  const { id } = await incidentOf(alertId)
  t.match(await incident(id), { status: 'triage', acknowledgedAt: null })

  t.equal((await call(ada!, 'POST', `/alerts/${alertId}/acknowledge`)).statusCode, 200)
  const acknowledged = await until('the incident to be acknowledged', async () => {
    const found = await incident(id)
    return found.status === 'investigating' && found
  })
  t.ok(acknowledged.acknowledgedAt, 'acknowledged then')
  t.type(acknowledged.mttaSeconds, 'number', 'its MTTA counts from it')
  const moves = (await timeline(id)).filter((entry) => entry.kind === 'status_changed')
  t.match(
    moves,
    [{ authorId: ada!.userId, data: { from: 'triage', to: 'investigating', alertId, via: 'api' } }],
    'one entry, by Ada, through the API',
  )

  // The source acknowledging again changes nothing more: the incident is no longer in triage.
  await ingest({ title: 'Checkout down', status: 'acknowledged', fingerprint: 'checkout' })
  await handedOn(alertId)
  t.equal((await timeline(id)).filter((entry) => entry.kind === 'status_changed').length, 1)
})

t.test('an incident its alerts opened resolves when the last of them resolves at the source', async (t) => {
  const first = await ingest({ title: 'Payments failing', priority: 'P1', service: 'payments', fingerprint: 'payments-1' })
  const { id } = await incidentOf(first)
  const second = await ingest({ title: 'Payments slow', priority: 'P3', service: 'payments', fingerprint: 'payments-2' })
  t.match(await incidentOf(second), { id }, 'the same service joins the incident')

  await ingest({ title: 'Payments failing', status: 'resolved', fingerprint: 'payments-1' })
  await handedOn(first)
  t.not((await incident(id)).status, 'resolved', 'one alert of two resolved leaves it open')

  await ingest({ title: 'Payments slow', status: 'resolved', fingerprint: 'payments-2' })
  const resolved = await until('the incident to resolve', async () => {
    const found = await incident(id)
    return found.status === 'resolved' && found
  })
  t.ok(resolved.resolvedAt)
  t.type(resolved.mttrSeconds, 'number')
  const moves = (await timeline(id)).filter((entry) => entry.kind === 'status_changed')
  t.match(moves, [{ authorId: null, data: { to: 'resolved', reason: 'its alerts resolved', alertId: second, via: 'source' } }])
})

t.test('an incident a person declared stays open when its alerts resolve: people close what they open', async (t) => {
  const alertId = await ingest({ title: 'Search degraded', priority: 'P4', service: 'search', fingerprint: 'search' })
  const declared = await call(ada!, 'POST', '/incidents', { title: 'Search is degraded', severity: 'SEV3', alertIds: [alertId] })
  t.equal(declared.statusCode, 201, declared.body)
  await ingest({ title: 'Search degraded', status: 'resolved', fingerprint: 'search' })
  await handedOn(alertId)
  t.equal((await incident(declared.json().id)).status, 'triage')
})

t.test('an organization may have people resolve the incidents alerts opened: its incident settings', async (t) => {
  t.match((await call(viewer!, 'GET', '/incident-settings')).json(), { resolveWithAlerts: true, defaults: true, updatedBy: null })
  t.equal((await call(ada!, 'PUT', '/incident-settings', { resolveWithAlerts: false })).statusCode, 403, 'a manager decides')
  const bad = await call(owner!, 'PUT', '/incident-settings', { resolveWithAlerts: 'no' })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, 'resolveWithAlerts')
  t.equal((await call(owner!, 'PUT', '/incident-settings', { resolveWithAlerts: false, extra: 1 })).statusCode, 400)
  t.match((await call(viewer!, 'GET', '/incident-settings')).json(), { defaults: true }, 'a refused change changes nothing')

  const off = await call(owner!, 'PUT', '/incident-settings', { resolveWithAlerts: false })
  t.equal(off.statusCode, 200)
  t.match(off.json(), { resolveWithAlerts: false, defaults: false, updatedBy: owner!.userId })
  t.match(await db.selectFrom('core.auditLogs').select(['action', 'changes']).where('entityType', '=', 'incident_settings').execute(), [
    { action: 'incident_settings.updated', changes: { before: { resolveWithAlerts: true }, after: { resolveWithAlerts: false } } },
  ])

  const alertId = await ingest({ title: 'Search down', priority: 'P1', service: 'search', fingerprint: 'search-1' })
  const { id } = await incidentOf(alertId)
  await ingest({ title: 'Search down', status: 'resolved', fingerprint: 'search-1' })
  await handedOn(alertId)
  t.not((await incident(id)).status, 'resolved', 'its only alert resolved, and it stays open for a person to resolve')

  await call(owner!, 'PUT', '/incident-settings', { resolveWithAlerts: true })
  t.match((await call(viewer!, 'GET', '/incident-settings')).json(), { resolveWithAlerts: true, defaults: false })
})
