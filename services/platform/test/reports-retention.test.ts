import { sql } from 'kysely'
import t from 'tap'
import { REPORT_RETENTION_QUEUE } from '@svc/plugin-platform'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'

// REPORTS_RETENTION_DAYS: reports asked for longer ago than that are deleted with their files by an
// hourly job, each with an audit entry by the system; newer ones stay.

const service = await startTestService(t, buildApp, { config: { reportsRetentionDays: 30 } })
const { app } = service
const db = app.database.db
const owner = await service.signIn('owner@retention.example')
const { id: orgId } = (
  await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: owner.headers, payload: { name: 'Keeps', slug: 'keeps' } })
).json<{ id: string }>()

const DAY = 86_400_000
/** A ready CSV report asked for `daysAgo` days ago, with its file. */
async function reportFrom(daysAgo: number) {
  const createdAt = new Date(Date.now() - daysAgo * DAY)
  const report = await db
    .insertInto('core.reports')
    .values({
      organizationId: orgId,
      type: 'incidents',
      format: 'csv',
      periodFrom: new Date(createdAt.getTime() - 7 * DAY),
      periodTo: createdAt,
      requestedBy: owner.userId,
      status: 'ready',
      fileName: 'incidents.csv',
      contentType: 'text/csv; charset=utf-8',
      sizeBytes: 3,
      createdAt,
      completedAt: createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('core.reportFiles')
    .values({ reportId: report.id, content: Buffer.from('a,b') })
    .execute()
  return report.id
}

t.test('the hourly job deletes reports past retention with their files, audited, and keeps the rest', async (t) => {
  const scheduled = await sql<{ cron: string }>`select cron from pgboss.schedule where name = ${REPORT_RETENTION_QUEUE}`.execute(db)
  t.same(
    scheduled.rows.map((row) => row.cron),
    ['23 * * * *'],
    'it runs every hour',
  )
  const old = [await reportFrom(45), await reportFrom(31)]
  const recent = await reportFrom(29)
  // More than one batch (100 per transaction) of failed reports that never had a file.
  const failed = await db
    .insertInto('core.reports')
    .values(
      Array.from({ length: 150 }, () => ({
        organizationId: orgId,
        type: 'uptime',
        format: 'pdf',
        periodFrom: new Date(Date.now() - 70 * DAY),
        periodTo: new Date(Date.now() - 60 * DAY),
        status: 'failed',
        error: 'the usage ledger could not be read',
        createdAt: new Date(Date.now() - 60 * DAY),
      })),
    )
    .returning('id')
    .execute()
  old.push(...failed.map((row) => row.id))
  await app.jobs.send(REPORT_RETENTION_QUEUE, {})
  await until('the old reports to go', async () => {
    const left = await db.selectFrom('core.reports').select('id').where('id', 'in', old).execute()
    return left.length === 0
  })
  t.equal(
    (await db.selectFrom('core.reportFiles').select('reportId').where('reportId', 'in', old).execute()).length,
    0,
    'their files went too',
  )
  const listed = (await app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/reports`, headers: owner.headers })).json<{
    data: Array<{ id: string }>
  }>()
  t.same(
    listed.data.map((row) => row.id),
    [recent],
    'a report inside retention stays',
  )
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['entityId', 'actorType', 'actorUserId', 'changes'])
    .where('organizationId', '=', orgId)
    .where('action', '=', 'expired')
    .orderBy('createdAt')
    .execute()
  t.same(audit.map((entry) => entry.entityId).sort(), [...old].sort(), 'each deletion is audited')
  t.match(
    audit.find((entry) => entry.entityId === old[0]),
    { actorType: 'system', actorUserId: null, changes: { before: { type: 'incidents', format: 'csv', status: 'ready' } } },
  )
})

t.test('a replica started without REPORTS_RETENTION_DAYS removes the schedule: reports are kept until deleted', async (t) => {
  const keeping = await buildApp({ ...service.config, reportsRetentionDays: undefined }, service.resources)
  t.teardown(() => keeping.close())
  await keeping.ready()
  const scheduled = await sql<{ name: string }>`select name from pgboss.schedule where name = ${REPORT_RETENTION_QUEUE}`.execute(db)
  t.same(scheduled.rows, [])
})
