import { recordAudit } from '@svc/audit'
import { publish } from '@svc/events'
import type { Executor } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { withCatalogNames } from '../oncall/index.js'
import { incidentAuditOf, incidentOrNotFound } from './common.js'
import { priorityOfIncidentSeverity } from './shaping/severities.js'
import type { Actor, SystemActor } from './operations.js'
import { addTimeline, incidentFacets, statusLinksOf } from './queries.js'

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
    severity: incident.severity,
    priority: await priorityOfIncidentSeverity(trx, incident.organizationId, incident.severity),
    services: await withCatalogNames(trx, incident.organizationId, [...new Set(facets.services.map((facet) => facet.service))]),
    statusIncidentIds: links.map((link) => link.statusIncidentId),
    status: 'resolved',
    body: RESOLVED_ON_STATUS_PAGES,
    publish: false,
    authorId,
  })
}

export interface StatusUpdate {
  status: 'investigating' | 'identified' | 'monitoring' | 'resolved'
  /** Empty when `template` gives the words. */
  body: string
  /** The key of a status page incident template (decision 0015, "Incident templates"). */
  template?: string
  /** The public name of a status page incident it opens; null: named after its components. */
  name: string | null
  publish: boolean
  /** The analysis whose draft the words come from. */
  draftOf?: string
}

/**
 * Posts a status update to the incident's timeline and asks the status pages to publish it
 * (`statuspage.incident_update_requested`: alerting never writes their tables), with its audit
 * entry, in the caller's transaction; answers the timeline entry. 404 when the incident is not
 * the organization's.
 */
export async function postStatusUpdate(
  trx: Executor,
  jobs: JobQueue,
  actor: Actor | SystemActor,
  organizationId: string,
  incidentId: string,
  update: StatusUpdate,
) {
  const { status, body, name, publish: publishNow, draftOf, template } = update
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const facets = await incidentFacets(trx, organizationId, [incident.id])
  const links = await statusLinksOf(trx, organizationId, incident.id)
  const [row] = await addTimeline(trx, [
    {
      organizationId,
      incidentId: incident.id,
      kind: 'status_update',
      // The timeline says which template gave the words when none were written.
      body: body || `Status page template ${template ?? ''}`.trim(),
      data: {
        statusPages: { status, publish: publishNow, ...(name ? { name } : {}), ...(template ? { template } : {}) },
        ...(draftOf ? { draftOf } : {}),
      },
      authorId: actor.userId,
    },
  ])
  await publish(jobs, trx, 'statuspage.incident_update_requested', {
    organizationId,
    incidentId: incident.id,
    updateId: row!.id,
    name,
    severity: incident.severity,
    priority: await priorityOfIncidentSeverity(trx, organizationId, incident.severity),
    services: await withCatalogNames(trx, organizationId, [...new Set(facets.services.map((facet) => facet.service))]),
    statusIncidentIds: links.map((link) => link.statusIncidentId),
    status,
    body,
    ...(template ? { template } : {}),
    publish: publishNow,
    authorId: actor.userId,
  })
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, {
    ...entry,
    action: 'incident.status_update_published',
    after: { status, body, name, publish: publishNow, ...(template ? { template } : {}), ...(draftOf ? { draftOf } : {}) },
  })
  return row!
}
