import type { DeployEvidence, IncidentContext, SimilarIncident, TimelineEntry } from '@svc/ai'
import type { Executor } from '@svc/db'
import {
  alertIncident,
  alertTimeline,
  deploysBetween,
  incidentRecord,
  type IncidentRecord,
  similarResolvedAlerts,
} from '@svc/plugin-alerting'
import { statusIncident, statusIncidentTimeline } from '@svc/plugin-statuspages'
import { recentCheckResults } from '@svc/plugin-synthetics'
import type { IncidentKey } from './analyses.js'

// The evidence an analysis gathers from the surfaces, through their read modules (alerting's and
// the status pages' and synthetics' reads.ts): insights never touches another surface's tables, and the incident reference
// (surface, id) is all it keeps of an incident.

/** Below this trigram similarity a past title is not "alike" (pg_trgm's own default threshold). */
const SIMILARITY_THRESHOLD = 0.3
const SIMILAR_LOOKBACK_DAYS = 180
export const DEPLOY_WINDOW_MINUTES = 240
/** A check's alert brings this many of its latest results into the timeline. */
const CHECK_RESULTS = 20

/** The incident as the analyzers see it; undefined when its surface has no such incident in the organization. */
export async function incidentContext(db: Executor, key: IncidentKey): Promise<IncidentContext | undefined> {
  if (key.sourceProduct === 'statuspages') {
    const incident = await statusIncident(db, key.organizationId, key.incidentId)
    if (!incident) return undefined
    return {
      sourceProduct: 'statuspages',
      incidentId: incident.id,
      title: incident.name,
      description: incident.description,
      service: incident.service,
      priority: incident.impact,
      status: incident.status,
      startedAt: incident.startedAt,
      occurrences: incident.updates,
      labels: { page: incident.pageName, components: incident.components },
    }
  }
  if (key.sourceProduct !== 'alerting') return undefined
  const alert = await alertIncident(db, key.organizationId, key.incidentId)
  if (!alert) {
    const incident = await incidentRecord(db, key.organizationId, key.incidentId)
    return incident && incidentOfAlerting(incident)
  }
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

/** An incident of alerting (INC-n) as the analyzers see it: begun at its first alert's onset, its services' first named. */
export function incidentOfAlerting(incident: IncidentRecord): IncidentContext {
  const onsets = incident.alerts.map((alert) =>
    alert.startedAt && alert.startedAt < alert.firstSeenAt ? alert.startedAt : alert.firstSeenAt,
  )
  const firstAlert = onsets.reduce<Date | undefined>((first, at) => (first && first <= at ? first : at), undefined)
  return {
    sourceProduct: 'alerting',
    incidentId: incident.id,
    reference: `INC-${incident.number}`,
    title: incident.title,
    description: incident.summary,
    service: incident.services[0] ?? null,
    priority: incident.severity,
    status: incident.status,
    startedAt: firstAlert && firstAlert < incident.startedAt ? firstAlert : incident.startedAt,
    occurrences: incident.alerts.reduce((sum, alert) => sum + alert.occurrences, 0),
    labels: { services: incident.services, alerts: incident.alerts.length },
  }
}

/** Deploys of the organization in the window before the incident began, newest first. */
export async function deploysBeforeIncident(db: Executor, organizationId: string, incident: IncidentContext): Promise<DeployEvidence[]> {
  const since = new Date(incident.startedAt.getTime() - DEPLOY_WINDOW_MINUTES * 60_000)
  const rows = await deploysBetween(db, organizationId, since, incident.startedAt, 20)
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
  const alike = await similarResolvedAlerts(db, organizationId, {
    title: incident.title,
    exceptId: incident.incidentId,
    lookbackDays: SIMILAR_LOOKBACK_DAYS,
    threshold: SIMILARITY_THRESHOLD,
    limit: 5,
  })
  const rootCauses = await latestRootCauses(
    db,
    organizationId,
    alike.map((row) => row.id),
  )
  return alike.map((row) => ({
    sourceProduct: 'alerting',
    incidentId: row.id,
    title: row.title,
    similarity: Math.round(Number(row.similarity) * 1000) / 1000,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    rootCause: rootCauses.get(row.id) ?? null,
  }))
}

/** The root cause of each alert's latest completed analysis (this surface's own table). */
async function latestRootCauses(db: Executor, organizationId: string, alertIds: string[]): Promise<Map<string, string | null>> {
  if (alertIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('divinux.analyses')
    .select(['incidentId', 'rootCause'])
    .distinctOn('incidentId')
    .where('organizationId', '=', organizationId)
    .where('sourceProduct', '=', 'alerting')
    .where('incidentId', 'in', alertIds)
    .where('status', '=', 'completed')
    .orderBy('incidentId')
    .orderBy('completedAt', 'desc')
    .execute()
  return new Map(rows.map((row) => [row.incidentId, row.rootCause]))
}

export async function incidentTimeline(db: Executor, organizationId: string, incident: IncidentContext): Promise<TimelineEntry[]> {
  if (incident.sourceProduct === 'statuspages') {
    const updates = await statusIncidentTimeline(db, organizationId, incident.incidentId, 200)
    return updates.map((update) => ({ type: update.status, at: update.displayAt.toISOString(), detail: update.body }))
  }
  const rows = await alertTimeline(db, organizationId, incident.incidentId, 200)
  const entries: TimelineEntry[] = rows.map((row) => ({
    type: row.type,
    at: row.createdAt.toISOString(),
    detail: (row.data as { title?: string } | null)?.title ?? null,
  }))
  // A synthetic check's alert: the check's latest results are evidence too (what failed, where, how).
  const checkId = incident.labels.checkId
  if (typeof checkId !== 'string') return entries
  const results = await recentCheckResults(db, organizationId, checkId, CHECK_RESULTS)
  const checks: TimelineEntry[] = results.map((result) => ({
    type: `check_${result.status ?? 'unknown'}`,
    at: result.dueAt.toISOString(),
    detail: [
      `region ${result.region}`,
      result.statusCode !== null ? `HTTP ${result.statusCode}` : null,
      result.totalMs !== null ? `${Math.round(result.totalMs)} ms` : null,
      result.error,
    ]
      .filter(Boolean)
      .join(', '),
  }))
  return [...entries, ...checks].sort((a, b) => a.at.localeCompare(b.at))
}
