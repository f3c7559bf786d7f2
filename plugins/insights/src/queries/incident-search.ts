import type { Executor, Page } from '@svc/db'
import { searchAlertingIncidents, searchAlerts } from '@svc/plugin-alerting'
import { searchStatusIncidents } from '@svc/plugin-statuspages'

export interface IncidentSearch {
  q?: string
  sourceProduct?: string
  from?: string
  to?: string
}

export interface FoundIncident {
  sourceProduct: 'alerting' | 'statuspages'
  kind: 'incident' | 'alert' | 'status_incident'
  incidentId: string
  reference: string
  title: string
  priority: string
  status: string
  service: string | null
  startedAt: string
  resolvedAt: string | null
}

/**
 * Incidents matching words (every word, any letter case: an incident's title or summary, an
 * alert's title or description, a status page incident's name or updates) in a time range, newest first, of the surfaces in
 * `readable` only, each through its read module. Paging across surfaces takes the first
 * `offset + limit` of each (newest first), merges them and cuts the page out of the merge.
 */
export async function searchIncidents(
  db: Executor,
  organizationId: string,
  search: IncidentSearch,
  readable: ReadonlySet<string>,
  page: Page,
) {
  const wanted = (product: string) => readable.has(product) && (!search.sourceProduct || search.sourceProduct === product)
  const head: Page = { offset: 0, limit: page.offset + page.limit }
  const [incidents, alerts, statusIncidents] = await Promise.all([
    wanted('alerting') ? searchAlertingIncidents(db, organizationId, search, head) : { rows: [], total: 0 },
    wanted('alerting') ? searchAlerts(db, organizationId, search, head) : { rows: [], total: 0 },
    wanted('statuspages') ? searchStatusIncidents(db, organizationId, search, head) : { rows: [], total: 0 },
  ])
  const found = [
    ...incidents.rows.map((row): FoundIncident => ({
      sourceProduct: 'alerting',
      kind: 'incident',
      incidentId: row.id,
      reference: `INC-${row.number}`,
      title: row.title,
      priority: row.severity,
      status: row.status,
      service: row.services[0] ?? null,
      startedAt: row.detectedAt.toISOString(),
      resolvedAt: row.resolvedAt?.toISOString() ?? null,
    })),
    ...alerts.rows.map((row): FoundIncident => ({
      sourceProduct: 'alerting',
      kind: 'alert',
      incidentId: row.id,
      reference: row.title,
      title: row.title,
      priority: row.priority,
      status: row.status,
      service: row.service,
      startedAt: row.firstSeenAt.toISOString(),
      resolvedAt: row.resolvedAt?.toISOString() ?? null,
    })),
    ...statusIncidents.rows.map((row): FoundIncident => ({
      sourceProduct: 'statuspages',
      kind: 'status_incident',
      incidentId: row.id,
      reference: row.name,
      title: row.name,
      priority: row.impact,
      status: row.status,
      service: null,
      startedAt: row.startedAt.toISOString(),
      resolvedAt: row.resolvedAt?.toISOString() ?? null,
    })),
  ].sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.incidentId.localeCompare(a.incidentId))
  return { rows: found.slice(page.offset, page.offset + page.limit), total: incidents.total + alerts.total + statusIncidents.total }
}
