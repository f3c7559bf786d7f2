import { sql } from 'kysely'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { DEFAULT_NOTIFIER_CONFIG, type ServiceConfig } from '@svc/config'
import { createNotifier } from '@svc/notifier'
import { REPORT_QUEUE, platformSurface, type ReportSources } from '@svc/plugin-platform'
import { buildServiceApp, type Resources } from '@svc/runtime'
import { startTestService, until } from '@svc/testkit'

// What happens when a report cannot be written, when a job comes twice, and when no signing key is
// set: the platform surface with readers that fail on purpose, and without REPORTS_SIGNING_KEY.

const none = { incidents: 0, acknowledged: 0, resolved: 0, mttaSeconds: null, mttrSeconds: null }
/** While set, the uptime reader waits for it: a report held part way through its writing. */
let uptimeHeld: { reached: () => void; release: Promise<void> } | undefined
const reportSources: ReportSources = {
  incidents: async () => ({ totals: none, bySeverity: [], byService: [], perDay: [], rows: [], alertsReceived: 0 }),
  componentUptime: async () => {
    if (uptimeHeld) {
      uptimeHeld.reached()
      await uptimeHeld.release
    }
    return { partialOutageWeight: 0.3, components: [] }
  },
  checkAvailability: async () => [],
  aiUsage: async () => {
    throw new Error('the usage ledger could not be read')
  },
}
async function surfaces(app: FastifyInstance): Promise<void> {
  await app.register(platformSurface, {
    statusPages: async () => ({ rows: [], total: 0 }),
    checks: async () => ({ rows: [], total: 0 }),
    reportSources,
    notifier: createNotifier({ jobs: app.jobs, database: app.database, config: DEFAULT_NOTIFIER_CONFIG, log: app.log }),
  })
}
const build = (config: ServiceConfig, shared?: Resources) =>
  buildServiceApp(config, { name: 'platform', title: 'Platform API', description: 'reports that fail', probes: true, surfaces }, shared)

const service = await startTestService(t, build)
const { app } = service
const db = app.database.db
const owner = await service.signIn('owner@failing.example')
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Failing', slug: 'failing' } })
).json<{ id: string }>()
const base = `/api/v1/organizations/${orgId}/reports`
const period = { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' }
const reportRow = (id: string) => db.selectFrom('core.reports').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
const settled = (id: string) =>
  until(`report ${id} settled`, async () => ((await reportRow(id)).status.match(/ready|failed/) ? reportRow(id) : undefined))

t.test('a report that cannot be written is failed with the reason, and cannot be downloaded', async (t) => {
  const answer = await app.inject({
    method: 'POST',
    url: `${base}/generate`,
    headers: owner.headers,
    payload: { type: 'ai-usage', format: 'pdf', ...period },
  })
  t.equal(answer.statusCode, 202)
  const { id } = answer.json<{ id: string }>()
  const report = await settled(id)
  t.match(report, { status: 'failed', error: 'the usage ledger could not be read', fileName: null })
  t.ok(report.completedAt, 'it is finished')
  const listed = (await app.inject({ method: 'GET', url: `${base}?status=failed`, headers: owner.headers })).json()
  t.match(listed.data, [{ id, status: 'failed', error: 'the usage ledger could not be read' }])
  const download = await app.inject({ method: 'GET', url: `${base}/${id}/download`, headers: owner.headers })
  t.equal(download.statusCode, 409)
  t.match(download.json(), { message: 'The report is failed, not ready' })
})

t.test('a job delivered again after its report is written changes nothing', async (t) => {
  const { id } = (
    await app.inject({
      method: 'POST',
      url: `${base}/generate`,
      headers: owner.headers,
      payload: { type: 'incidents', format: 'csv', ...period },
    })
  ).json<{ id: string }>()
  const first = await settled(id)
  t.equal(first.status, 'ready')
  const again = await app.jobs.send(REPORT_QUEUE, { reportId: id })
  await until('the repeated job done', async () => (await app.jobs.getJobById(REPORT_QUEUE, again!))?.state === 'completed')
  const second = await reportRow(id)
  t.same(second.completedAt, first.completedAt, 'the report was not written again')
  t.equal(second.status, 'ready')
})

t.test('without REPORTS_SIGNING_KEY, links are refused with 503 REPORTS_DISABLED', async (t) => {
  const { id } = (
    await app.inject({
      method: 'POST',
      url: `${base}/generate`,
      headers: owner.headers,
      payload: { type: 'uptime', format: 'csv', ...period },
    })
  ).json<{ id: string }>()
  t.equal((await settled(id)).status, 'ready', 'reports are still written')
  const download = await app.inject({ method: 'GET', url: `${base}/${id}/download`, headers: owner.headers })
  t.equal(download.statusCode, 503)
  t.match(download.json(), { code: 'REPORTS_DISABLED', message: 'Report downloads are off: REPORTS_SIGNING_KEY is not set' })
  const file = await app.inject({ method: 'GET', url: `/api/v1/reports/${id}/file?expires=9999999999&signature=abc` })
  t.equal(file.statusCode, 503)
  t.match(file.json(), { code: 'REPORTS_DISABLED' })
})

t.test('a report deleted while it is written keeps no file and is not failed', async (t) => {
  let reached = () => {}
  let release = () => {}
  const writing = new Promise<void>((resolve) => (reached = resolve))
  uptimeHeld = { reached: () => reached(), release: new Promise<void>((resolve) => (release = resolve)) }
  t.teardown(() => {
    uptimeHeld = undefined
    release()
  })
  const answer = await app.inject({
    method: 'POST',
    url: `${base}/generate`,
    headers: owner.headers,
    payload: { type: 'uptime', format: 'pdf', ...period },
  })
  const { id } = answer.json<{ id: string }>()
  await writing
  t.equal((await reportRow(id)).status, 'running')
  t.equal((await app.inject({ method: 'DELETE', url: `${base}/${id}`, headers: owner.headers })).statusCode, 204)
  release()
  // The job ends once its pg-boss job is complete; by then the file would have been stored.
  await until('the job to finish', async () => {
    const { rows } = await sql<{
      state: string
    }>`select state from pgboss.job where name = ${REPORT_QUEUE} and data->>'reportId' = ${id}`.execute(db)
    return rows[0]?.state === 'completed'
  })
  t.equal(await db.selectFrom('core.reports').select('id').where('id', '=', id).executeTakeFirst(), undefined, 'the report stays deleted')
  t.equal(
    await db.selectFrom('core.reportFiles').select('reportId').where('reportId', '=', id).executeTakeFirst(),
    undefined,
    'no file is kept',
  )
})
