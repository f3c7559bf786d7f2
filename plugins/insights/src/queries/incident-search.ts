import { containing, paged, type Executor, type Page } from '@svc/db'

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
 * range, newest first, of the surfaces in `readable` only. Alerts are the only incidents so far; a surface that lands adds its own
 * branch here, answering the same shape.
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
  let query = db.selectFrom('divinux.alerts').where('organizationId', '=', organizationId)
  for (const word of (search.q ?? '').split(/\s+/).filter(Boolean)) {
    const pattern = containing(word)
    query = query.where((eb) => eb.or([eb('title', 'ilike', pattern), eb('description', 'ilike', pattern)]))
  }
  if (search.from) query = query.where('firstSeenAt', '>=', new Date(search.from))
  if (search.to) query = query.where('firstSeenAt', '<', new Date(search.to))
  const { rows, total } = await paged(
    query,
    (rows) =>
      rows
        .select(['id', 'title', 'priority', 'status', 'service', 'firstSeenAt', 'resolvedAt'])
        .orderBy('firstSeenAt', 'desc')
        .orderBy('id', 'desc'),
    page,
  )
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
