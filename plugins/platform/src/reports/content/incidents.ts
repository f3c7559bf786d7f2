import type { Executor } from '@svc/db'
import { MAX_ROWS, dailySeries, duration, type ReportContent } from '../model.js'
import type { IncidentReader, ResponseStats } from '../sources.js'

const statsCells = (stats: ResponseStats) => [
  stats.incidents,
  stats.acknowledged,
  stats.resolved,
  duration(stats.mttaSeconds),
  duration(stats.mttrSeconds),
]
const statsColumns = ['Incidents', 'Acknowledged', 'Resolved', 'MTTA', 'MTTR']

/**
 * Incidents detected in the period: how many, by severity and service, and how fast they were
 * acknowledged (MTTA) and resolved (MTTR) from detection, each the mean over the incidents that
 * were, with each incident's times as the incident itself shows them. The alerts behind them are
 * counted beside, as PagerDuty's and incident.io's reports count incidents, not alerts.
 */
export async function incidentsReport(
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
  incidents: IncidentReader,
): Promise<ReportContent> {
  const report = await incidents(db, organizationId, from, to, MAX_ROWS)
  const { totals } = report
  return {
    title: 'Incidents',
    from,
    to,
    summary: [
      { label: 'Incidents', value: String(totals.incidents) },
      { label: 'Acknowledged', value: String(totals.acknowledged) },
      { label: 'Resolved', value: String(totals.resolved) },
      { label: 'Mean time to acknowledge (MTTA)', value: duration(totals.mttaSeconds) },
      { label: 'Mean time to resolve (MTTR)', value: duration(totals.mttrSeconds) },
      { label: 'Alerts received', value: String(report.alertsReceived) },
    ],
    chart: {
      title: 'Incidents per day',
      unit: 'incidents',
      points: dailySeries(from, to, new Map(report.perDay.map((row) => [row.day, row.incidents]))),
    },
    tables: [
      {
        title: 'By severity',
        columns: ['Severity', ...statsColumns],
        rows: report.bySeverity.map((row) => [row.severity, ...statsCells(row)]),
      },
      {
        title: 'By service',
        columns: ['Service', ...statsColumns],
        rows: report.byService.map((row) => [row.service ?? '(none)', ...statsCells(row)]),
      },
    ],
    detail: {
      title: 'Incidents',
      columns: [
        'reference',
        'id',
        'detected_at',
        'title',
        'severity',
        'status',
        'services',
        'alerts',
        'acknowledged_at',
        'resolved_at',
        'seconds_to_acknowledge',
        'seconds_to_resolve',
        'type',
        'custom_fields',
      ],
      rows: report.rows.map((incident) => [
        `INC-${incident.number}`,
        incident.id,
        incident.detectedAt.toISOString(),
        incident.title,
        incident.severity,
        incident.status,
        incident.services.join(' '),
        incident.alerts,
        incident.acknowledgedAt?.toISOString() ?? null,
        incident.resolvedAt?.toISOString() ?? null,
        incident.secondsToAcknowledge,
        incident.secondsToResolve,
        incident.type,
        // One column whatever fields an organization defines: the values as JSON, keys sorted.
        Object.keys(incident.fields).length > 0 ? JSON.stringify(incident.fields, Object.keys(incident.fields).sort()) : null,
      ]),
    },
    notes: [
      ...(totals.incidents === 0 ? ['No incident was detected in this period.'] : []),
      ...(totals.incidents > report.rows.length
        ? [`Only the first ${report.rows.length} of ${totals.incidents} incidents are listed; the figures count all of them.`]
        : []),
    ],
  }
}
