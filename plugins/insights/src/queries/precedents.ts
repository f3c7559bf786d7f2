import type { Executor } from '@svc/db'

// What this surface remembers of past incidents: the cause its latest completed analysis found,
// and the RCAs written about them with their action items. The investigator's "similar
// incidents" tool adds these to what alerting says looks alike.

/** The latest completed analysis of each incident: its root cause and the category its findings gave. */
export async function pastConclusions(db: Executor, organizationId: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return new Map<string, { rootCause: string | null; category: string | null }>()
  const rows = await db
    .selectFrom('divinux.analyses')
    .select(['incidentId', 'rootCause', 'findings'])
    .distinctOn('incidentId')
    .where('organizationId', '=', organizationId)
    .where('sourceProduct', '=', 'alerting')
    .where('incidentId', 'in', incidentIds)
    .where('status', '=', 'completed')
    .orderBy('incidentId')
    .orderBy('completedAt', 'desc')
    .execute()
  return new Map(
    rows.map((row) => {
      const findings = row.findings as { probableCause?: { category?: string } } | null
      return [row.incidentId, { rootCause: row.rootCause, category: findings?.probableCause?.category ?? null }]
    }),
  )
}

/** RCAs linked to any of these incidents of alerting, with their root cause and action items (at most 10). */
export async function rcasWithActionItems(db: Executor, organizationId: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return []
  const rcas = await db
    .selectFrom('divinux.rcas as r')
    .innerJoin('divinux.rcaIncidentLinks as l', 'l.rcaId', 'r.id')
    .select(['r.id', 'r.title', 'r.rootCause', 'l.incidentId'])
    .where('r.organizationId', '=', organizationId)
    .where('l.organizationId', '=', organizationId)
    .where('l.sourceProduct', '=', 'alerting')
    .where('l.incidentId', 'in', incidentIds)
    .orderBy('r.createdAt', 'desc')
    .limit(10)
    .execute()
  if (rcas.length === 0) return []
  const items = await db
    .selectFrom('divinux.rcaActionItems')
    .select(['rcaId', 'title', 'status'])
    .where('organizationId', '=', organizationId)
    .where(
      'rcaId',
      'in',
      rcas.map((rca) => rca.id),
    )
    .orderBy('createdAt')
    .execute()
  return rcas.map((rca) => ({
    ...rca,
    actionItems: items.filter((item) => item.rcaId === rca.id).map(({ title, status }) => ({ title, status })),
  }))
}
