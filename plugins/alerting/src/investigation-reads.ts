import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { priorityOfIncidentSeverity } from './incidents/index.js'
import { deploysIn } from './intake/index.js'
import { dependencyNameEdges, withCatalogNames } from './oncall/index.js'

// What the insights surface's investigator may read of alerting's tables (decision 0021, "The
// tools"): an incident with its alerts, the alerts' timelines, deploys around a moment, the
// dependency map, resolved incidents alike, and which escalation policy pages for a service.
// Reads only, each scoped to one organization.

const alertColumns = [
  'a.id',
  'a.title',
  'a.description',
  'a.service',
  'a.priority',
  'a.status',
  'a.source',
  'a.labels',
  'a.firstSeenAt',
  'a.startedAt',
  'a.resolvedAt',
  'a.occurrences',
] as const

/** An incident of alerting, the priority its severity pages at, and its alerts (the first 100 by onset); undefined when the organization has no such incident. */
export async function incidentUnderInvestigation(db: Executor, organizationId: string, incidentId: string) {
  const incident = await db
    .selectFrom('divinux.incidents')
    .select(['id', 'number', 'title', 'summary', 'severity', 'status', 'startedAt', 'detectedAt', 'resolvedAt'])
    .where('organizationId', '=', organizationId)
    .where('id', '=', incidentId)
    .executeTakeFirst()
  if (!incident) return undefined
  const alerts = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
    .select(alertColumns)
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .orderBy(sql`coalesce(a.started_at, a.first_seen_at)`)
    .orderBy('a.id')
    .limit(100)
    .execute()
  // The alert priority its severity pages at: how the investigator ranks it beside alerts.
  return { ...incident, priority: await priorityOfIncidentSeverity(db, organizationId, incident.severity), alerts }
}

/** One alert in the same shape as an incident's alerts, and the incident it belongs to (if any). */
export async function alertUnderInvestigation(db: Executor, organizationId: string, alertId: string) {
  const alert = await db
    .selectFrom('divinux.alerts as a')
    .leftJoin('divinux.incidentAlerts as l', (join) => join.onRef('l.alertId', '=', 'a.id').on('l.organizationId', '=', organizationId))
    .select([...alertColumns, 'l.incidentId'])
    .where('a.organizationId', '=', organizationId)
    .where('a.id', '=', alertId)
    .executeTakeFirst()
  return alert
}

/** The timelines of these alerts (created, occurred again, acknowledged, label changes…), oldest first, at most `limit` entries. */
export async function alertTimelines(db: Executor, organizationId: string, alertIds: string[], limit: number) {
  if (alertIds.length === 0) return []
  return db
    .selectFrom('divinux.alertEvents')
    .select(['alertId', 'type', 'data', 'occurrences', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('alertId', 'in', alertIds)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** Deploy events in (`from`, `to`] of these services (every service when null), newest first (the intake module's one read of deploys). */
export async function deploysAround(
  db: Executor,
  organizationId: string,
  window: { services: string[] | null; from: Date; to: Date; limit: number },
) {
  return deploysIn(db, organizationId, { ...window, services: window.services ?? undefined })
}

/** The organization's service dependency map by name (lower-case): each edge `service` depends on `dependsOn`. */
export const dependencyEdges = dependencyNameEdges

/** The failing services' names, and every other name of their catalog services: a deploy of `checkout` is one of an alert carrying `svc-checkout`. */
export const sameServices = withCatalogNames

/** Resolved incidents of the last `lookbackDays` whose titles are alike (pg_trgm), most alike first, with the services of their alerts. */
export async function similarResolvedIncidentsOf(
  db: Executor,
  organizationId: string,
  like: { title: string; exceptId: string; lookbackDays: number; threshold: number; limit: number },
) {
  const result = await sql<{ id: string; number: number; title: string; similarity: number; resolvedAt: Date | null; services: string[] }>`
    select i.id, i.number, i.title, similarity(i.title, ${like.title}) as similarity, i.resolved_at as "resolvedAt",
      coalesce((select array_agg(distinct a.service) from divinux.incident_alerts l join divinux.alerts a on a.id = l.alert_id
        where l.incident_id = i.id and a.service is not null), '{}') as services
    from divinux.incidents i
    where i.organization_id = ${organizationId} and i.status = 'resolved' and i.id <> ${like.exceptId}
      and i.created_at > now() - make_interval(days => ${like.lookbackDays})
      and similarity(i.title, ${like.title}) >= ${like.threshold}
    order by similarity desc, i.resolved_at desc nulls last
    limit ${like.limit}`.execute(db)
  return result.rows
}

/** For each service, the escalation policy that paged its latest alert: whom to add when a service is another team's. */
export async function pagingPoliciesOf(db: Executor, organizationId: string, services: string[]) {
  if (services.length === 0) return []
  const result = await sql<{ service: string; policyId: string; policyName: string }>`
    select distinct on (a.service) a.service, p.id as "policyId", p.name as "policyName"
    from divinux.alerts a
    join divinux.alert_escalations e on e.alert_id = a.id
    join divinux.escalation_policies p on p.id = e.policy_id
    where a.organization_id = ${organizationId} and a.service in (${sql.join(services)})
    order by a.service, a.created_at desc`.execute(db)
  return result.rows
}
