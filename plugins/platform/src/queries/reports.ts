import { sql } from 'kysely'
import { lockUntilCommit, paged, type Executor, type Page } from '@svc/db'
import type { ReportFormat, ReportType } from '../reports/model.js'

const reportColumns = [
  'id',
  'organizationId',
  'type',
  'format',
  'periodFrom',
  'periodTo',
  'status',
  'error',
  'requestedBy',
  'sections',
  'fileName',
  'contentType',
  'sizeBytes',
  'createdAt',
  'startedAt',
  'completedAt',
] as const

export async function insertReport(
  db: Executor,
  report: {
    organizationId: string
    type: ReportType
    format: ReportFormat
    from: Date
    to: Date
    requestedBy: string
    sections: string[]
  },
) {
  return db
    .insertInto('core.reports')
    .values({
      organizationId: report.organizationId,
      type: report.type,
      format: report.format,
      periodFrom: report.from,
      periodTo: report.to,
      requestedBy: report.requestedBy,
      sections: report.sections,
    })
    .returning(reportColumns)
    .executeTakeFirstOrThrow()
}

/**
 * How many of the organization's reports wait or are being written, with the organization's
 * report requests serialized until the caller's transaction ends, so the cap holds under races.
 */
export async function lockPendingReports(db: Executor, organizationId: string): Promise<number> {
  await lockUntilCommit(db, `reports:${organizationId}`)
  const { pending } = await db
    .selectFrom('core.reports')
    .select((eb) => eb.fn.countAll<number>().as('pending'))
    .where('organizationId', '=', organizationId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirstOrThrow()
  return pending
}

export async function listReports(db: Executor, organizationId: string, filter: { status?: string; type?: string }, page: Page) {
  let query = db.selectFrom('core.reports').where('organizationId', '=', organizationId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.type) query = query.where('type', '=', filter.type)
  return paged(query, (rows) => rows.select(reportColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc'), page)
}

export async function reportOf(db: Executor, organizationId: string, reportId: string) {
  return db
    .selectFrom('core.reports')
    .select(reportColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', reportId)
    .executeTakeFirst()
}

/**
 * Takes a report to write: a queued one, or a running one whose writer stopped beating
 * `staleSeconds` ago (its replica died; the job came back). A ready or failed report, and one a
 * live writer is on, are left alone, so a job delivered twice writes one file.
 */
export async function claimReport(db: Executor, reportId: string, staleSeconds: number) {
  return db
    .updateTable('core.reports as report')
    .from('core.organizations as organization')
    .set({ status: 'running', startedAt: sql`now()`, heartbeatAt: sql`now()`, error: null })
    .whereRef('organization.id', '=', 'report.organizationId')
    .where('report.id', '=', reportId)
    .where((where) =>
      where.or([
        where('report.status', '=', 'queued'),
        where.and([
          where('report.status', '=', 'running'),
          where(sql`coalesce(report.heartbeat_at, report.started_at)`, '<', sql<Date>`now() - make_interval(secs => ${staleSeconds})`),
        ]),
      ]),
    )
    .returning([
      'report.id',
      'report.organizationId',
      'organization.name as organizationName',
      'report.type',
      'report.format',
      'report.periodFrom',
      'report.periodTo',
      'report.sections',
    ])
    .executeTakeFirst()
}

/** The writer of a running report is alive. */
export async function beatReport(db: Executor, reportId: string): Promise<void> {
  await db
    .updateTable('core.reports')
    .set({ heartbeatAt: sql<Date>`now()` })
    .where('id', '=', reportId)
    .where('status', '=', 'running')
    .execute()
}

/** Running reports whose writer stopped beating `staleSeconds` ago go back to the queue; answers their ids. */
export async function requeueAbandonedReports(db: Executor, staleSeconds: number): Promise<string[]> {
  const rows = await db
    .updateTable('core.reports')
    .set({ status: 'queued' })
    .where('status', '=', 'running')
    .where(sql`coalesce(heartbeat_at, started_at)`, '<', sql<Date>`now() - make_interval(secs => ${staleSeconds})`)
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

/** Stores a running report's file; answers false when the report was deleted while it was written. */
export async function storeReportFile(
  db: Executor,
  reportId: string,
  file: { name: string; contentType: string; content: Buffer },
): Promise<boolean> {
  const stored = await db
    .updateTable('core.reports')
    .set({ status: 'ready', fileName: file.name, contentType: file.contentType, sizeBytes: file.content.length, completedAt: sql`now()` })
    .where('id', '=', reportId)
    .returning('id')
    .executeTakeFirst()
  if (!stored) return false
  await db
    .insertInto('core.reportFiles')
    .values({ reportId, content: file.content })
    .onConflict((conflict) => conflict.column('reportId').doUpdateSet({ content: file.content }))
    .execute()
  return true
}

const deletedColumns = ['id', 'organizationId', 'type', 'format', 'status', 'periodFrom', 'periodTo'] as const

/** Deletes the organization's report with its file; answers what it was, or undefined when there is none. */
export async function deleteReport(db: Executor, organizationId: string, reportId: string) {
  return db
    .deleteFrom('core.reports')
    .where('organizationId', '=', organizationId)
    .where('id', '=', reportId)
    .returning(deletedColumns)
    .executeTakeFirst()
}

export type DeletedReport = NonNullable<Awaited<ReturnType<typeof deleteReport>>>

/**
 * Deletes up to `limit` reports, of any organization, asked for before `before`, with their files;
 * answers what they were. Rows another replica is deleting are skipped, not waited for.
 */
export async function deleteReportsCreatedBefore(db: Executor, before: Date, limit: number): Promise<DeletedReport[]> {
  return db
    .deleteFrom('core.reports')
    .where('id', 'in', (eb) =>
      eb.selectFrom('core.reports').select('id').where('createdAt', '<', before).orderBy('createdAt').limit(limit).forUpdate().skipLocked(),
    )
    .returning(deletedColumns)
    .execute()
}

export async function failReport(db: Executor, reportId: string, error: string) {
  await db
    .updateTable('core.reports')
    .set({ status: 'failed', error, completedAt: sql`now()` })
    .where('id', '=', reportId)
    .where('status', 'in', ['queued', 'running'])
    .execute()
}

/** A ready report's file, by id alone: the signed link is what authorises it. */
export async function reportFile(db: Executor, reportId: string) {
  return db
    .selectFrom('core.reports as report')
    .innerJoin('core.reportFiles as file', 'file.reportId', 'report.id')
    .select(['report.fileName', 'report.contentType', 'file.content'])
    .where('report.id', '=', reportId)
    .where('report.status', '=', 'ready')
    .executeTakeFirst()
}
