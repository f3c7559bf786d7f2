import type { Executor, Page } from '@svc/db'
import { searchAlerts } from '@svc/plugin-alerting'

export interface IncidentSearch {
  q?: string
  sourceProduct?: string
  from?: string
  to?: string
}

export interface FoundIncident {
  sourceProduct: 'alerting'
  incidentId: string
  title: string
  priority: string
  status: string
  service: string | null
  startedAt: string
  resolvedAt: string | null
}

/**
 * Incidents matching words (every word, in the title or description, any letter case) in a time
 * range, newest first, of the surfaces in `readable` only, each through its read module. Alerts are
 * the only incidents so far; a surface that lands adds its own branch here, answering the same shape.
 */
export async function searchIncidents(
  db: Executor,
  organizationId: string,
  search: IncidentSearch,
  readable: ReadonlySet<string>,
  page: Page,
) {
  if ((search.sourceProduct && search.sourceProduct !== 'alerting') || !readable.has('alerting'))
    return { rows: [] as FoundIncident[], total: 0 }
  const { rows, total } = await searchAlerts(db, organizationId, search, page)
  return {
    rows: rows.map((row): FoundIncident => ({
      sourceProduct: 'alerting',
      incidentId: row.id,
      title: row.title,
      priority: row.priority,
      status: row.status,
      service: row.service,
      startedAt: row.firstSeenAt.toISOString(),
      resolvedAt: row.resolvedAt?.toISOString() ?? null,
    })),
    total,
  }
}
