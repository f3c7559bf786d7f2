import t from 'tap'
import { publish, type CheckStateChanged } from '@svc/events'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Maintenance quiets monitoring (issue 58; decision 0015, "Maintenance quiets monitoring"): a
// status page maintenance silences the alerts of its components' services and checks for its
// window, its components show maintenance rather than what their checks see, and when it ends
// what it held pages as any silence's alerts do.
const service = await startTestService(t, buildApp, { config: { outbound: { allowPrivateTargets: true } } })
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'quiet', {
  manager: { alerting: 'manager', statuspages: 'manager', synthetics: 'manager' },
  ada: { alerting: 'responder', statuspages: 'responder' },
})
const [manager, ada] = ['manager', 'ada'].map(person)
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
async function created(url: string, payload: object) {
  const response = await call(manager!, 'POST', url, payload)
  if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
  return response.json()
}
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

const alerting = `/api/v1/organizations/${orgId}`
const pages = `/api/v1/statuspages/organizations/${orgId}`
const policy = await created(`${alerting}/escalation-policies`, {
  name: 'Ada',
  steps: [{ delayMinutes: 5, targets: [{ type: 'user', id: ada!.userId }] }],
})
const webhook = await created(`${alerting}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })
const ingest = async (service: string, fingerprint: string): Promise<string> => {
  const response = await app.inject({
    method: 'POST',
    url: webhook.ingestPath,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ title: `${service} errors`, service, fingerprint }),
  })
  return response.json().alertId
}
const escalationOf = async (alertId: string) =>
  (await call(manager!, 'GET', `${alerting}/alerts/${alertId}/notifications`)).json().escalation as { state: string; note: string | null }
const settledAs = (alertId: string, state: string) =>
  until(`${alertId} to be ${state}`, async () => (await escalationOf(alertId))?.state === state)

const page = await created(`${pages}/pages`, { name: 'Quiet Co', slug: 'quiet-co', published: true })
const payments = await created(`${pages}/pages/${page.id}/components`, { name: 'Payments', alertServices: ['payments'] })
const check = await created(`/api/v1/synthetics/organizations/${orgId}/checks`, {
  name: 'Payments health',
  kind: 'http',
  frequencySeconds: 60,
  request: { url: 'http://127.0.0.1:9/health' },
  paused: true,
  alertRule: { failures: 1, priority: 'P2', escalationPolicyId: policy.id },
  statusComponentIds: [payments.id],
})
const maintenanceSilences = async (maintenanceId: string) =>
  (await call(manager!, 'GET', `${alerting}/silences?limit=100`))
    .json()
    .data.filter((silence: { statusMaintenanceId: string | null }) => silence.statusMaintenanceId === maintenanceId)
const checkEvent = (state: 'failing' | 'passing'): CheckStateChanged => ({
  organizationId: orgId,
  checkId: check.id,
  name: check.name,
  kind: 'http',
  target: 'http://127.0.0.1:9/health',
  state,
  previous: state === 'failing' ? 'passing' : 'failing',
  failingRegions: state === 'failing' ? ['eu'] : [],
  failures: state === 'failing' ? [{ region: 'eu', reason: 'connection refused' }] : [],
  priority: 'P2',
  escalationPolicyId: policy.id,
  statusComponentIds: [payments.id],
  service: null,
  at: new Date().toISOString(),
})
const componentStatus = async () =>
  (await db.selectFrom('divinux.statusComponents').select('status').where('id', '=', payments.id).executeTakeFirstOrThrow()).status

const maintenance = await created(`${pages}/pages/${page.id}/maintenances`, {
  name: 'Payments database upgrade',
  scheduledFor: inMinutes(60),
  scheduledUntil: inMinutes(120),
  componentIds: [payments.id],
})
const maintenanceBase = `${pages}/pages/${page.id}/maintenances/${maintenance.id}`

t.test('scheduling a maintenance silences its services and checks for its window', async (t) => {
  const silences = await maintenanceSilences(maintenance.id)
  t.equal(silences.length, 2)
  t.same(
    silences.map((silence: { matchers: object }) => JSON.stringify(silence.matchers)).sort(),
    [{ services: ['payments'] }, { labels: { checkId: check.id } }].map((matchers) => JSON.stringify(matchers)).sort(),
    'one silence over the components’ services, one over the check they follow',
  )
  for (const silence of silences) {
    t.match(silence, { state: 'pending', comment: 'Maintenance: Payments database upgrade', createdBy: null })
    t.equal(silence.startsAt, maintenance.scheduledFor)
    t.equal(silence.endsAt, maintenance.scheduledUntil)
  }
  const changed = await call(manager!, 'PATCH', `${alerting}/silences/${silences[0].id}`, { endsAt: inMinutes(30) })
  t.equal(changed.statusCode, 409, 'a maintenance’s silence moves with the maintenance, not by hand')
  t.match(changed.json().message, /status page maintenance/)

  const moved = await call(manager!, 'PATCH', maintenanceBase, { scheduledUntil: inMinutes(180) })
  t.equal(moved.statusCode, 200)
  for (const silence of await maintenanceSilences(maintenance.id))
    t.equal(silence.endsAt, moved.json().scheduledUntil, 'moving it moves them')
})

t.test('while it is in progress, its alerts page no one and its component shows maintenance', async (t) => {
  const started = await call(ada!, 'POST', `${maintenanceBase}/updates`, { body: 'We started early.', status: 'in_progress' })
  t.equal(started.statusCode, 201, started.body)
  for (const silence of await maintenanceSilences(maintenance.id)) t.equal(silence.state, 'active', 'started early, the silences start now')

  const quieted = await ingest('payments', 'payments-5xx')
  const other = await ingest('search', 'search-5xx')
  await settledAs(quieted, 'silenced')
  t.match((await escalationOf(quieted)).note, /Maintenance: Payments database upgrade/)
  await until('the other service’s alert to escalate', async () => (await escalationOf(other))?.state === 'active')

  await db.transaction().execute((trx) => publish(app.jobs, trx, 'check.failed', checkEvent('failing')))
  await db.transaction().execute((trx) => publish(app.jobs, trx, 'check.state_changed', checkEvent('failing')))
  const checkAlert = await until('the check’s alert', () =>
    db.selectFrom('divinux.alerts').select('id').where('fingerprint', '=', `check:${check.id}`).executeTakeFirst(),
  )
  await settledAs(checkAlert.id, 'silenced')
  await until('the component to take the check’s verdict', async () => {
    const row = await db
      .selectFrom('divinux.statusComponents')
      .select('checkStatuses')
      .where('id', '=', payments.id)
      .executeTakeFirstOrThrow()
    return Object.keys(row.checkStatuses as object).length > 0
  })
  t.equal(await componentStatus(), 'under_maintenance', 'planned work shows as maintenance, not as the outage its check sees')
  const summary = (await app.inject({ method: 'GET', url: '/api/v1/statuspages/public/quiet-co/api/v2/summary.json' })).json()
  t.match(summary.status, { indicator: 'none', description: 'Service Under Maintenance' })

  t.test('when it completes, what it held pages and the component shows what its check sees', async (t) => {
    const done = await call(ada!, 'POST', `${maintenanceBase}/updates`, { body: 'Done.', status: 'completed' })
    t.equal(done.statusCode, 201)
    for (const silence of await maintenanceSilences(maintenance.id)) t.equal(silence.state, 'expired')
    await settledAs(quieted, 'active')
    await settledAs(checkAlert.id, 'active')
    t.equal(await componentStatus(), 'major_outage', 'the check still fails: the component says so again')
  })
})

t.test('a maintenance deleted before its window removes its silences', async (t) => {
  const later = await created(`${pages}/pages/${page.id}/maintenances`, {
    name: 'Next week',
    scheduledFor: inMinutes(7 * 24 * 60),
    scheduledUntil: inMinutes(7 * 24 * 60 + 60),
    componentIds: [payments.id],
  })
  t.equal((await maintenanceSilences(later.id)).length, 2)
  t.equal((await call(manager!, 'DELETE', `${pages}/pages/${page.id}/maintenances/${later.id}`)).statusCode, 204)
  const left = await db.selectFrom('divinux.silences').select('id').where('comment', '=', 'Maintenance: Next week').execute()
  t.same(left, [], 'nothing was held: nothing is left')
})

t.test('a maintenance of components following nothing silences nothing', async (t) => {
  const lonely = await created(`${pages}/pages/${page.id}/components`, { name: 'Docs' })
  const quiet = await created(`${pages}/pages/${page.id}/maintenances`, {
    name: 'Docs rebuild',
    scheduledFor: inMinutes(60),
    scheduledUntil: inMinutes(90),
    componentIds: [lonely.id],
  })
  t.same(await maintenanceSilences(quiet.id), [])
})
