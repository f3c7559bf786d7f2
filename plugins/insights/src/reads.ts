import type { Executor } from '@svc/db'
import type { IncidentReference } from '@svc/events'

// What other surfaces may know of the insights surface's tables: the alerting surface shows an
// alert's latest analysis in its command room. Reads only, scoped to one organization.

/** The latest analysis of an incident, whatever its status; undefined before one is requested. */
export async function latestAnalysisOf(db: Executor, organizationId: string, incident: IncidentReference) {
  return db
    .selectFrom('divinux.analyses')
    .select(['id', 'status', 'summary', 'rootCause', 'recommendations', 'severity', 'suspectedDeployId', 'createdAt', 'completedAt'])
    .where('organizationId', '=', organizationId)
    .where('sourceProduct', '=', incident.sourceProduct)
    .where('incidentId', '=', incident.incidentId)
    .orderBy('createdAt', 'desc')
    .limit(1)
    .executeTakeFirst()
}
