import type { AgentTool } from '@svc/ai'
import type { Executor } from '@svc/db'
import {
  alertTimelines,
  dependencyEdges,
  deploysAround,
  sameServices,
  similarResolvedAlerts,
  similarResolvedIncidentsOf,
} from '@svc/plugin-alerting'
import { componentHistoryAround, statusIncidentTimeline } from '@svc/plugin-statuspages'
import { checkResultsAround } from '@svc/plugin-synthetics'
import { pastConclusions, rcasWithActionItems } from '../queries/precedents.js'
import { dependenciesOf, scoreDeploys, victimsOfDependencies, type ScoredDeploy } from './deploy-scoring.js'
import type { Subject } from './subject.js'

// The investigator's tools (decision 0021, "The tools"): each a read owned by the surface whose
// data it is (alerting's, synthetics', status pages' read modules, and this surface's own
// tables), never another surface's table. The offline planner and the model call the same tools;
// each answers once per investigation and keeps what it found for the findings' evidence.

const DEFAULT_WINDOW_MINUTES = 240
const MAX_WINDOW_MINUTES = 1_440
/** Deploys this long after the onset are shown as what cannot have caused it (a common decoy). */
const AFTER_ONSET_MINUTES = 30
const CHECK_WINDOW_MINUTES = 30
const SIMILAR_THRESHOLD = 0.3
const SIMILAR_LOOKBACK_DAYS = 180

export interface CheckRegionResult {
  checkId: string
  name: string
  region: string
  runs: number
  failures: number
  medianMs: number | null
  errors: string[]
}

export interface AlertTimeline {
  id: string
  title: string
  service: string | null
  priority: string
  source: string
  labels: Record<string, string>
  minutesAfterOnset: number
  occurrences: number
  status: string
  events: Array<{ type: string; at: string }>
  /** Labels the latest repeat carried that differ from the first occurrence's (a pod, a version, a region that moved). */
  labelChanges: Array<{ key: string; from: string | null; to: string | null }>
}

export interface SimilarPast {
  kind: 'incident' | 'alert'
  id: string
  title: string
  similarity: number
  resolvedAt: string | null
  rootCause: string | null
  category: string | null
  rcas: Array<{ id: string; title: string; rootCause: string | null; actionItems: Array<{ title: string; status: string }> }>
}

/** What the tools found, for the planner's scoring and the analysis' evidence. */
export interface Gathered {
  dependencies?: { affected: string[]; dependsOn: string[]; dependents: string[]; edges: Array<{ service: string; dependsOn: string }> }
  alerts?: AlertTimeline[]
  /** A status page incident's updates, oldest first (its timeline). */
  updates?: Array<{ status: string; at: string; body: string }>
  deploys?: ScoredDeploy[]
  configChanges?: ScoredDeploy[]
  checks?: CheckRegionResult[]
  components?: Array<{ id: string; name: string; status: string; changes: Array<{ status: string; at: string }> }>
  similar?: SimilarPast[]
}

export interface Toolbox {
  tools: AgentTool[]
  gathered: Gathered
}

const NO_INPUT = { type: 'object', properties: {}, required: [], additionalProperties: false }
const WINDOW_INPUT = {
  type: 'object',
  properties: {
    windowMinutes: {
      type: ['integer', 'null'],
      description: `How far before the onset to look (default ${DEFAULT_WINDOW_MINUTES}, at most 1440)`,
    },
  },
  required: ['windowMinutes'],
  additionalProperties: false,
}

const minutesBetween = (from: Date, to: Date) => Math.round((to.getTime() - from.getTime()) / 60_000)

function windowOf(input: Record<string, unknown>): number {
  const given = input.windowMinutes
  return typeof given === 'number' && Number.isFinite(given)
    ? Math.min(MAX_WINDOW_MINUTES, Math.max(5, Math.round(given)))
    : DEFAULT_WINDOW_MINUTES
}

function stringLabels(labels: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels)
      .slice(0, 30)
      .map(([key, value]) => [key.slice(0, 100), (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).slice(0, 200)]),
  )
}

type LabelSet = Record<string, unknown>
const labelsIn = (data: unknown): LabelSet => ((data as { labels?: LabelSet } | null)?.labels ?? {}) as LabelSet
const labelText = (value: unknown) => (value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value))

/** What changed between the labels an alert was created with and those of its latest repeat (its one `occurred` row). */
function labelChangesOf(events: Array<{ type: string; data: unknown }>): AlertTimeline['labelChanges'] {
  const created = events.find((event) => event.type === 'created')
  const repeated = events.find((event) => event.type === 'occurred')
  if (!created || !repeated) return []
  const before = labelsIn(created.data)
  const after = labelsIn(repeated.data)
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => labelText(before[key]) !== labelText(after[key]))
    .slice(0, 20)
    .map((key) => ({ key, from: labelText(before[key]), to: labelText(after[key]) }))
}

/** The tools of one investigation of `subject` in the organization. */
export function investigationTools(db: Executor, organizationId: string, subject: Subject): Toolbox {
  const gathered: Gathered = {}
  const once = <T>(compute: () => Promise<T>) => {
    let answer: Promise<T> | undefined
    return () => (answer ??= compute())
  }

  const dependencyMap = once(() => dependencyEdges(db, organizationId))
  // The failing services by every name the catalog knows them by (lower-cased too, as the map's edges are).
  const affectedServices = once(async () => {
    const names = await sameServices(db, organizationId, subject.services)
    return [...new Set([...names, ...names.map((name) => name.toLowerCase())])]
  })
  const dependencies = once(async () => {
    const edges = await dependencyMap()
    const affected = await affectedServices()
    const dependsOn = dependenciesOf(affected, edges)
    const dependents = [...new Set(edges.filter((edge) => affected.includes(edge.dependsOn)).map((edge) => edge.service))]
    const relevant = new Set([...affected, ...dependsOn, ...dependents])
    gathered.dependencies = {
      affected,
      dependsOn,
      dependents,
      edges: edges.filter((edge) => relevant.has(edge.service) && relevant.has(edge.dependsOn)).slice(0, 100),
    }
    return gathered.dependencies
  })

  const timelines = once(async () => {
    if (subject.kind === 'status_incident') {
      const updates = await statusIncidentTimeline(db, organizationId, subject.id, 50)
      gathered.updates = updates.map((update) => ({ status: update.status, at: update.displayAt.toISOString(), body: update.body }))
      return { updates: gathered.updates }
    }
    const events = await alertTimelines(
      db,
      organizationId,
      subject.alerts.map((alert) => alert.id),
      500,
    )
    gathered.alerts = subject.alerts.slice(0, 50).map((alert) => ({
      id: alert.id,
      title: alert.title,
      service: alert.service,
      priority: alert.priority,
      source: alert.source,
      labels: stringLabels(alert.labels),
      minutesAfterOnset: minutesBetween(subject.onset, alert.onset),
      occurrences: alert.occurrences,
      status: alert.status,
      events: events
        .filter((event) => event.alertId === alert.id)
        .slice(0, 10)
        .map((event) => ({ type: event.type, at: event.createdAt.toISOString() })),
      labelChanges: labelChangesOf(events.filter((event) => event.alertId === alert.id)),
    }))
    return gathered.alerts
  })

  const scoredChanges = async (windowMinutes: number) => {
    const { dependsOn } = await dependencies()
    const rows = await deploysAround(db, organizationId, {
      services: null,
      from: new Date(subject.onset.getTime() - windowMinutes * 60_000),
      to: new Date(subject.onset.getTime() + AFTER_ONSET_MINUTES * 60_000),
      limit: 100,
    })
    // The alerts come in order of onset: the first of each service is when that service began failing.
    const firstFailures = new Map<string, Date>()
    for (const alert of subject.alerts)
      if (alert.service && !firstFailures.has(alert.service)) firstFailures.set(alert.service, alert.onset)
    return scoreDeploys(rows, {
      onset: subject.onset,
      environments: subject.environments,
      affected: await affectedServices(),
      dependencies: dependsOn,
      failedAfterDependency: victimsOfDependencies(firstFailures, await dependencyMap()),
    })
  }

  const tools: AgentTool[] = [
    {
      name: 'get_service_dependencies',
      description: 'The dependency map around the failing services: what they depend on (transitively) and what depends on them',
      parameters: NO_INPUT,
      run: () => dependencies(),
    },
    {
      name: 'get_alert_timelines',
      description:
        'The alerts under investigation: title, service, labels, minutes after the onset, occurrences, their events and label changes; for a status page incident, its updates',
      parameters: NO_INPUT,
      run: () => timelines(),
    },
    {
      name: 'get_deploys',
      description:
        'Releases and rollbacks before the onset (and up to 30 minutes after, which cannot be the cause), each scored 0 to 1 with reasons: time before onset, relation to the failing services, environment, replaced by a newer deploy',
      parameters: WINDOW_INPUT,
      run: async (input) => {
        const windowMinutes = windowOf(input)
        gathered.deploys = (await scoredChanges(windowMinutes)).filter((deploy) => deploy.kind !== 'config').slice(0, 20)
        return { onset: subject.onset.toISOString(), windowMinutes, deploys: gathered.deploys }
      },
    },
    {
      name: 'get_config_changes',
      description: 'Configuration changes (feature flags, settings) recorded as deploy events of kind config, scored like deploys',
      parameters: WINDOW_INPUT,
      run: async (input) => {
        const windowMinutes = windowOf(input)
        gathered.configChanges = (await scoredChanges(windowMinutes)).filter((deploy) => deploy.kind === 'config').slice(0, 20)
        return { onset: subject.onset.toISOString(), windowMinutes, configChanges: gathered.configChanges }
      },
    },
    {
      name: 'get_check_results',
      description:
        'Synthetic check results around the onset (30 minutes either side) per region, for the checks whose alerts are under investigation',
      parameters: NO_INPUT,
      run: async () => {
        const checkIds = [
          ...new Set(subject.alerts.map((alert) => alert.labels.checkId).filter((id): id is string => typeof id === 'string')),
        ]
        const window = CHECK_WINDOW_MINUTES * 60_000
        gathered.checks = await checkResultsAround(
          db,
          organizationId,
          checkIds,
          new Date(subject.onset.getTime() - window),
          new Date(subject.onset.getTime() + window),
        )
        return { checks: gathered.checks }
      },
    },
    {
      name: 'get_status_components',
      description: 'Status page components that follow the failing services, with their status changes since an hour before the onset',
      parameters: NO_INPUT,
      run: async () => {
        const rows = await componentHistoryAround(
          db,
          organizationId,
          subject.services,
          new Date(subject.onset.getTime() - 3_600_000),
          new Date(),
        )
        gathered.components = rows.map((row) => ({
          id: row.id,
          name: row.name,
          status: row.status,
          changes: row.changes.map((change) => ({ status: change.status, at: change.changedAt.toISOString() })),
        }))
        return { components: gathered.components }
      },
    },
    {
      name: 'get_similar_incidents',
      description:
        'Resolved incidents and alerts of the last 180 days whose titles look alike, with the cause found then and their RCAs’ root causes and action items',
      parameters: NO_INPUT,
      run: async () => {
        const like = {
          title: subject.title,
          exceptId: subject.id,
          lookbackDays: SIMILAR_LOOKBACK_DAYS,
          threshold: SIMILAR_THRESHOLD,
          limit: 5,
        }
        const [incidents, alerts] = await Promise.all([
          similarResolvedIncidentsOf(db, organizationId, like),
          subject.kind === 'incident' ? Promise.resolve([]) : similarResolvedAlerts(db, organizationId, like),
        ])
        const ids = [...incidents.map((row) => row.id), ...alerts.map((row) => row.id)]
        const [conclusions, rcas] = await Promise.all([
          pastConclusions(db, organizationId, ids),
          rcasWithActionItems(db, organizationId, ids),
        ])
        const past = (
          kind: 'incident' | 'alert',
          row: { id: string; title: string; similarity: number; resolvedAt: Date | null },
        ): SimilarPast => ({
          kind,
          id: row.id,
          title: row.title,
          similarity: Math.round(Number(row.similarity) * 1000) / 1000,
          resolvedAt: row.resolvedAt?.toISOString() ?? null,
          rootCause: conclusions.get(row.id)?.rootCause ?? null,
          category: conclusions.get(row.id)?.category ?? null,
          rcas: rcas.filter((rca) => rca.incidentId === row.id).map(({ incidentId: _, ...rca }) => rca),
        })
        gathered.similar = [...incidents.map((row) => past('incident', row)), ...alerts.map((row) => past('alert', row))]
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, 5)
        return { similar: gathered.similar }
      },
    },
  ]
  // Every tool is also answered to the planner in the same shape the model gets.
  return { tools, gathered }
}
