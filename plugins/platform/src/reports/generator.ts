import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import { beatReport, claimReport, failReport, requeueAbandonedReports, storeReportFile } from '../queries/reports.js'
import { aiUsageReport } from './content/ai-usage.js'
import { usageReport } from './content/usage.js'
import { auditLogReport } from './content/audit-log.js'
import { incidentsReport } from './content/incidents.js'
import { uptimeReport } from './content/uptime.js'
import { renderCsv } from './csv.js'
import type { ReportContent, ReportFormat, ReportType } from './model.js'
import { renderPdf } from './pdf.js'
import type { ReportSources } from './sources.js'

export const REPORT_QUEUE = 'reports.generate'
/** Every minute, reports whose writer died are queued again. */
export const REPORT_SWEEP_QUEUE = 'reports.sweep'
/**
 * A writer beats this often while it writes; one silent for STALE_SECONDS died (its replica was
 * killed), and its report is written again within the next sweep: a minute or two, not the job's
 * 15-minute expiry (decision 0018, "A writer that dies").
 */
const BEAT_MS = 10_000
const STALE_SECONDS = 30

interface ReportJob {
  reportId: string
}

function contentOf(
  db: Executor,
  sources: ReportSources,
  type: ReportType,
  organizationId: string,
  from: Date,
  to: Date,
  sections: readonly string[],
): Promise<ReportContent> {
  switch (type) {
    case 'audit-log':
      return auditLogReport(db, organizationId, from, to)
    case 'incidents':
      return incidentsReport(db, organizationId, from, to, sources.incidents)
    case 'uptime':
      return uptimeReport(db, organizationId, from, to, sources, sections)
    case 'ai-usage':
      return aiUsageReport(db, organizationId, from, to, sources.aiUsage)
    case 'usage':
      return usageReport(db, organizationId, from, to)
  }
}

const fileNameOf = (type: string, from: Date, to: Date, format: string) =>
  `${type}-${from.toISOString().slice(0, 10)}-${new Date(to.getTime() - 1).toISOString().slice(0, 10)}.${format}`

/**
 * Writes reports in the background: `generate` queues a job in the transaction that records the
 * report; a worker on any platform replica reads the period, renders the file and stores it with
 * the report in one transaction. A report that cannot be written is marked failed with the reason,
 * not retried: the same data would fail the same way.
 */
export function createReportGenerator(deps: { database: Database; jobs: JobQueue; sources: ReportSources; log: FastifyBaseLogger }) {
  const { database, jobs, sources, log } = deps
  const db = database.db

  async function generate(reportId: string, now = new Date()): Promise<void> {
    const report = await claimReport(db, reportId, STALE_SECONDS)
    if (!report) return
    const beating = setInterval(() => {
      beatReport(db, reportId).catch((error: Error) => log.warn({ err: error, reportId }, 'report heartbeat failed'))
    }, BEAT_MS)
    try {
      const content = await contentOf(
        db,
        sources,
        report.type as ReportType,
        report.organizationId,
        report.periodFrom,
        report.periodTo,
        report.sections,
      )
      const format = report.format as ReportFormat
      const file =
        format === 'pdf'
          ? { contentType: 'application/pdf', content: await renderPdf(content, report.organizationName, now) }
          : { contentType: 'text/csv; charset=utf-8', content: renderCsv(content) }
      const stored = await db
        .transaction()
        .execute((trx) =>
          storeReportFile(trx, report.id, { ...file, name: fileNameOf(report.type, report.periodFrom, report.periodTo, format) }),
        )
      if (stored) log.info({ reportId, type: report.type, format, bytes: file.content.length }, 'report ready')
      else log.info({ reportId }, 'report deleted while it was written; its file is dropped')
    } catch (error) {
      log.error({ err: error, reportId }, 'report failed')
      await failReport(db, reportId, (error as Error).message)
    } finally {
      clearInterval(beating)
    }
  }

  /** Queues again the reports whose writer died. */
  async function sweep(): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const abandoned = await requeueAbandonedReports(trx, STALE_SECONDS)
      for (const reportId of abandoned) await enqueue(trx, reportId)
      if (abandoned.length > 0) log.warn({ reports: abandoned }, 'reports whose writer stopped are queued again')
    })
  }

  async function enqueue(executor: Executor, reportId: string): Promise<void> {
    await jobs.send(REPORT_QUEUE, { reportId } satisfies ReportJob, { db: inTransaction(executor), singletonKey: reportId })
  }

  return {
    generate,
    sweep,
    /** Queues the report's job with the executor (a transaction) that inserted it. */
    enqueue,
    async start(): Promise<void> {
      // Expiry past the slowest report: a job whose worker died comes back after it.
      await ensureQueue(jobs, REPORT_QUEUE, { retryLimit: 3, retryDelay: 10, expireInSeconds: 900 })
      // One report at a time, the next fetched as soon as one is done rather than a polling interval later.
      await workEach<ReportJob>(jobs, REPORT_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1 }, (job) => generate(job.data.reportId))
      await ensureQueue(jobs, REPORT_SWEEP_QUEUE, { retryLimit: 0, expireInSeconds: 60 })
      await jobs.work(REPORT_SWEEP_QUEUE, { pollingIntervalSeconds: 2 }, () => sweep())
      await jobs.schedule(REPORT_SWEEP_QUEUE, '* * * * *')
    },
    async stop(): Promise<void> {
      await jobs.offWork(REPORT_QUEUE)
      await jobs.offWork(REPORT_SWEEP_QUEUE)
    },
  }
}

export type ReportGenerator = ReturnType<typeof createReportGenerator>
