import { publish } from '@svc/events'
import type { Executor } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { withCatalogNames } from '../oncall/index.js'
import type { Severity } from './model.js'
import { incidentFacets, statusLinksOf } from './queries.js'

/** What a status page says when the incident behind it is resolved: Statuspage's own words. */
export const RESOLVED_ON_STATUS_PAGES = 'This incident has been resolved.'

/**
 * The status pages follow their incident's resolution (decision 0019, "The status page follows
 * its incident"): each status page incident opened for it or linked to it that is still open gets
 * a resolved update, published as its incident was, and the components it held settle. Alerting
 * never writes their tables: it asks through the status pages' own event, in the transaction that
 * resolves the incident. `updateId` is the timeline entry of the resolution (each is applied once).
 */
export async function resolveOnStatusPages(
  jobs: JobQueue,
  trx: Executor,
  incident: { organizationId: string; id: string; severity: string },
  updateId: string,
  authorId: string | null,
): Promise<void> {
  const [facets, links] = await Promise.all([
    incidentFacets(trx, incident.organizationId, [incident.id]),
    statusLinksOf(trx, incident.organizationId, incident.id),
  ])
  await publish(jobs, trx, 'statuspage.incident_update_requested', {
    organizationId: incident.organizationId,
    incidentId: incident.id,
    updateId,
    name: null,
    severity: incident.severity as Severity,
    services: await withCatalogNames(trx, incident.organizationId, [...new Set(facets.services.map((facet) => facet.service))]),
    statusIncidentIds: links.map((link) => link.statusIncidentId),
    status: 'resolved',
    body: RESOLVED_ON_STATUS_PAGES,
    publish: false,
    authorId,
  })
}
