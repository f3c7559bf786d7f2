import { auditContextOf, type AuditContext } from '@svc/audit'
import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { dependencyNameEdges } from '../oncall/index.js'
import { deploysIn, minutesBefore } from '../intake/index.js'
import { responseTimes, type IncidentStatus } from './model.js'
import {
  findIncident,
  incidentFacets,
  incidentResponders,
  incidentRoles,
  type IncidentAlertRow,
  type IncidentRoleRow,
  type IncidentRow,
  type NewTimelineRow,
} from './queries.js'

// What every incident route does the same way: find the incident of the caller's organization
// (404 otherwise), answer it, and say who changed it.

const iso = (date: Date | null) => date?.toISOString() ?? null

export function summaryBody(row: IncidentRow) {
  return {
    id: row.id,
    number: row.number,
    reference: `INC-${row.number}`,
    title: row.title,
    summary: row.summary,
    // The table's check constraints hold these to the schemas' lists.
    severity: row.severity as 'SEV1',
    status: row.status as IncidentStatus,
    openedBy: row.openedBy as 'person' | 'alert',
    declaredBy: row.declaredBy,
    mergedInto: row.mergedInto,
    snoozedUntil: iso(row.snoozedUntil),
    type: row.typeKey,
    fields: row.fields as Record<string, unknown>,
    alertCount: row.alertCount ?? 0,
    startedAt: row.startedAt.toISOString(),
    detectedAt: row.detectedAt.toISOString(),
    acknowledgedAt: iso(row.acknowledgedAt),
    mitigatedAt: iso(row.mitigatedAt),
    resolvedAt: iso(row.resolvedAt),
    ...responseTimes(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

const roleBody = (row: IncidentRoleRow) => ({ ...row, assignedAt: row.assignedAt.toISOString() })

export async function incidentOrNotFound(executor: Executor, organizationId: string, incidentId: string, forUpdate = false) {
  const row = isUuid(incidentId) ? await findIncident(executor, organizationId, incidentId, forUpdate) : undefined
  if (!row) throw new NotFoundError('incident')
  return row
}

export async function fullIncidentBody(executor: Executor, organizationId: string, row: IncidentRow) {
  // One after the other: the executor may be a transaction.
  const roles = await incidentRoles(executor, organizationId, row.id)
  const responders = await incidentResponders(executor, organizationId, row.id)
  return {
    ...summaryBody(row),
    roles: roles.map(roleBody),
    responders: responders.map((responder) => ({
      ...responder,
      via: responder.via as 'api' | 'chat' | 'request',
      addedAt: responder.addedAt.toISOString(),
    })),
  }
}

export function incidentAudit(request: Parameters<typeof auditContextOf>[0], organizationId: string, incidentId: string) {
  return incidentAuditOf(auditContextOf(request), organizationId, incidentId)
}

/** The audit context and entry of a change to an incident, by whoever acted (a request, a chat user). */
export function incidentAuditOf(context: AuditContext, organizationId: string, incidentId: string) {
  return { context, entry: { organizationId, product: 'alerting' as const, entityType: 'incident', entityId: incidentId } }
}

/** A timeline entry of the incident by `authorId` (null: the system). */
export function timelineEntry(
  organizationId: string,
  incidentId: string,
  authorId: string | null,
  kind: string,
  data: Record<string, unknown>,
  body: string | null = null,
): NewTimelineRow {
  return { organizationId, incidentId, kind, body, data, authorId }
}

export const timelineBody = (row: {
  id: string
  kind: string
  body: string | null
  data: unknown
  authorId: string | null
  createdAt: Date
}) => ({
  ...row,
  kind: row.kind as 'note',
  data: row.data as Record<string, unknown>,
  createdAt: row.createdAt.toISOString(),
})

/** An alert's link to its incident, as the API answers it. */
export const linkBody = (row: IncidentAlertRow) => ({
  ...row,
  matched: row.matched as Record<string, unknown>,
  linkedAt: row.linkedAt.toISOString(),
})

/** Deploys of the incident's services, and of the services they depend on, in the window before it started; newest first. */
export async function deploysBeforeIncident(
  db: Executor,
  organizationId: string,
  incident: { id: string; startedAt: Date },
  windowMinutes: number,
  limit: number,
) {
  const facets = await incidentFacets(db, organizationId, [incident.id])
  const services = new Set(facets.services.map((facet) => facet.service))
  for (const edge of await dependencyNameEdges(db, organizationId)) if (services.has(edge.service)) services.add(edge.dependsOn)
  return deploysIn(db, organizationId, { services: [...services], ...minutesBefore(incident.startedAt, windowMinutes), limit })
}
