import type { Executor } from '@svc/db'
import { MAX_ROWS, dailySeries, duration, type ReportContent } from '../model.js'
import type { AlertReader, ResponseStats } from '../sources.js'

const statsCells = (stats: ResponseStats) => [
  stats.alerts,
  stats.acknowledged,
  stats.resolved,
  duration(stats.mttaSeconds),
  duration(stats.mttrSeconds),
]
const statsColumns = ['Alerts', 'Acknowledged', 'Resolved', 'MTTA', 'MTTR']
const seconds = (from: Date, until: Date | null) => (until ? Math.round((until.getTime() - from.getTime()) / 1000) : null)

/**
 * Alerts opened in the period: how many, by priority and service, and how fast they were
 * acknowledged (MTTA) and resolved (MTTR), each the mean over the alerts that were.
 */
export async function incidentsReport(
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
  alerts: AlertReader,
): Promise<ReportContent> {
  const report = await alerts(db, organizationId, from, to, MAX_ROWS)
  const { totals } = report
  return {
    title: 'Incidents',
    from,
    to,
    summary: [
      { label: 'Alerts opened', value: String(totals.alerts) },
      { label: 'Acknowledged', value: String(totals.acknowledged) },
      { label: 'Resolved', value: String(totals.resolved) },
      { label: 'Mean time to acknowledge (MTTA)', value: duration(totals.mttaSeconds) },
      { label: 'Mean time to resolve (MTTR)', value: duration(totals.mttrSeconds) },
    ],
    chart: {
      title: 'Alerts opened per day',
      unit: 'alerts',
      points: dailySeries(from, to, new Map(report.perDay.map((row) => [row.day, row.alerts]))),
    },
    tables: [
      {
        title: 'By priority',
        columns: ['Priority', ...statsColumns],
        rows: report.byPriority.map((row) => [row.priority, ...statsCells(row)]),
      },
      {
        title: 'By service',
        columns: ['Service', ...statsColumns],
        rows: report.byService.map((row) => [row.service ?? '(none)', ...statsCells(row)]),
      },
    ],
    detail: {
      title: 'Alerts',
      columns: [
        'id',
        'opened_at',
        'title',
        'priority',
        'service',
        'source',
        'status',
        'acknowledged_at',
        'resolved_at',
        'seconds_to_acknowledge',
        'seconds_to_resolve',
      ],
      rows: report.rows.map((alert) => [
        alert.id,
        alert.createdAt.toISOString(),
        alert.title,
        alert.priority,
        alert.service,
        alert.source,
        alert.status,
        alert.acknowledgedAt?.toISOString() ?? null,
        alert.resolvedAt?.toISOString() ?? null,
        seconds(alert.createdAt, alert.acknowledgedAt),
        seconds(alert.createdAt, alert.resolvedAt),
      ]),
    },
    notes: [
      ...(totals.alerts === 0 ? ['No alerts were opened in this period.'] : []),
      ...(totals.alerts > report.rows.length
        ? [`Only the first ${report.rows.length} of ${totals.alerts} alerts are listed; the figures count all of them.`]
        : []),
    ],
  }
}
