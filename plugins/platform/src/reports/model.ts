export const reportTypes = ['audit-log', 'incidents', 'uptime', 'ai-usage', 'usage'] as const
export type ReportType = (typeof reportTypes)[number]

export const reportFormats = ['csv', 'pdf'] as const
export type ReportFormat = (typeof reportFormats)[number]

export const reportStatuses = ['queued', 'running', 'ready', 'failed'] as const
export type ReportStatus = (typeof reportStatuses)[number]

/** The longest period one report covers. */
export const MAX_PERIOD_DAYS = 366
/**
 * Reports of one organization waiting or being written at once; past it, 429. One organization
 * queuing a hundred reports then delays another's by at most this many in the shared queue.
 */
export const MAX_PENDING_REPORTS = 5
/** Rows a report lists at most (its totals always count everything); past this it says so. */
export const MAX_ROWS = 100_000

export type Cell = string | number | null

export interface Table {
  title: string
  columns: string[]
  rows: Cell[][]
}

/**
 * What a report says, before it is a file: the PDF shows the summary, the chart and every
 * table; the CSV is the `detail` table, one row per record, for spreadsheets and scripts.
 */
export interface ReportContent {
  title: string
  from: Date
  to: Date
  summary: Array<{ label: string; value: string }>
  chart: { title: string; unit: string; points: Array<{ label: string; value: number }> }
  tables: Table[]
  detail: Table
  /** Caveats a reader must see (an empty section, rows left out, how a figure is weighted). */
  notes: string[]
}

const DAY_MS = 86_400_000

/** Every UTC day of [from, to) as YYYY-MM-DD, for a chart that shows quiet days as zero. */
export function daysOf(from: Date, to: Date): string[] {
  const days: string[] = []
  for (let day = Math.floor(from.getTime() / DAY_MS) * DAY_MS; day < to.getTime(); day += DAY_MS)
    days.push(new Date(day).toISOString().slice(0, 10))
  return days
}

/** A per-day series over the whole period, zero where the data has no row. */
export function dailySeries(from: Date, to: Date, values: ReadonlyMap<string, number>) {
  return daysOf(from, to).map((day) => ({ label: day, value: values.get(day) ?? 0 }))
}

/** A duration for people: `42 s`, `12.5 min`, `3.2 h`; `n/a` without one. */
export function duration(seconds: number | null): string {
  if (seconds === null) return 'n/a'
  if (seconds < 120) return `${Math.round(seconds)} s`
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`
  return `${(seconds / 3600).toFixed(1)} h`
}

export const percentText = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(3)} %`)

/** What the audit log keeps of a deleted report (`deleted` by a person, `expired` by retention). */
export const deletedReportAudit = (
  report: { id: string; organizationId: string; type: string; format: string; status: string; periodFrom: Date; periodTo: Date },
  action: 'deleted' | 'expired',
) => ({
  organizationId: report.organizationId,
  product: 'platform' as const,
  entityType: 'report',
  entityId: report.id,
  action,
  before: {
    type: report.type,
    format: report.format,
    status: report.status,
    from: report.periodFrom.toISOString(),
    to: report.periodTo.toISOString(),
  },
})
