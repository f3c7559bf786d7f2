import { sql } from 'kysely'
import type { DeployEvidence, IncidentContext, SimilarIncident, TimelineEntry } from '@svc/ai'
import type { Executor } from '@svc/db'
import type { IncidentKey } from './analyses.js'

// The evidence an analysis reads from the surfaces' tables. Reads only: insights never writes
// another surface's tables (ARCHITECTURE.md), and the incident reference (surface, id) is all
// it keeps of an incident.

/** Below this trigram similarity a past title is not "alike" (pg_trgm's own default threshold). */
const SIMILARITY_THRESHOLD = 0.3
const SIMILAR_LOOKBACK_DAYS = 180
export const DEPLOY_WINDOW_MINUTES = 240

/** The incident as the analyzers see it; undefined when its surface has no such incident in the organization. */
export async function incidentContext(db: Executor, key: IncidentKey): Promise<IncidentContext | undefined> {
  // Alerts are the only incidents until the synthetics and status-page surfaces land.
  if (key.sourceProduct !== 'alerting') return undefined
  const alert = await db
    .selectFrom('divinux.alerts')
    .select(['id', 'title', 'description', 'service', 'priority', 'status', 'firstSeenAt', 'occurrences', 'labels'])
    .where('organizationId', '=', key.organizationId)
    .where('id', '=', key.incidentId)
    .executeTakeFirst()
  if (!alert) return undefined
  return {
    sourceProduct: 'alerting',
    incidentId: alert.id,
    title: alert.title,
    description: alert.description,
    service: alert.service,
    priority: alert.priority,
    status: alert.status,
    startedAt: alert.firstSeenAt,
    occurrences: alert.occurrences,
    labels: (alert.labels ?? {}) as Record<string, unknown>,
  }
}

/** Deploys of the organization in the window before the incident began, newest first. */
export async function deploysBeforeIncident(db: Executor, organizationId: string, incident: IncidentContext): Promise<DeployEvidence[]> {
  const since = new Date(incident.startedAt.getTime() - DEPLOY_WINDOW_MINUTES * 60_000)
  const rows = await db
    .selectFrom('divinux.deployEvents')
    .select(['id', 'service', 'environment', 'version', 'commitSha', 'status', 'deployedAt'])
    .where('organizationId', '=', organizationId)
    .where('deployedAt', '<=', incident.startedAt)
    .where('deployedAt', '>', since)
    .orderBy('deployedAt', 'desc')
    .limit(20)
    .execute()
  return rows.map((row) => ({
    id: row.id,
    service: row.service,
    environment: row.environment,
    version: row.version,
    commitSha: row.commitSha,
    status: row.status,
    at: row.deployedAt.toISOString(),
    minutesBeforeIncident: Math.floor((incident.startedAt.getTime() - row.deployedAt.getTime()) / 60_000),
  }))
}

/** Resolved alerts of the last months whose titles look like this one, most alike first, with the root cause their analysis found. */
export async function similarResolvedIncidents(
  db: Executor,
  organizationId: string,
  incident: IncidentContext,
): Promise<SimilarIncident[]> {
  const result = await sql<{ id: string; title: string; similarity: number; resolvedAt: Date | null; rootCause: string | null }>`
    select a.id, a.title, similarity(a.title, ${incident.title}) as similarity, a.resolved_at,
      (select an.root_cause from divinux.analyses an
        where an.organization_id = a.organization_id and an.source_product = 'alerting' and an.incident_id = a.id and an.status = 'completed'
        order by an.completed_at desc limit 1) as root_cause
    from divinux.alerts a
    where a.organization_id = ${organizationId} and a.status = 'resolved' and a.id <> ${incident.incidentId}
      and a.created_at > now() - make_interval(days => ${SIMILAR_LOOKBACK_DAYS})
      and similarity(a.title, ${incident.title}) >= ${SIMILARITY_THRESHOLD}
    order by similarity desc, a.resolved_at desc nulls last
    limit 5`.execute(db)
  return result.rows.map((row) => ({
    sourceProduct: 'alerting',
    incidentId: row.id,
    title: row.title,
    similarity: Math.round(Number(row.similarity) * 1000) / 1000,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    rootCause: row.rootCause,
  }))
}

export async function incidentTimeline(db: Executor, organizationId: string, incident: IncidentContext): Promise<TimelineEntry[]> {
  const rows = await db
    .selectFrom('divinux.alertEvents')
    .select(['type', 'data', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('alertId', '=', incident.incidentId)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(200)
    .execute()
  return rows.map((row) => ({
    type: row.type,
    at: row.createdAt.toISOString(),
    detail: (row.data as { title?: string } | null)?.title ?? null,
  }))
}
