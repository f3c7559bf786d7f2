import type { Executor } from '@svc/db'
import { alertUnderInvestigation, incidentIdOfAlert, incidentUnderInvestigation } from '@svc/plugin-alerting'
import { statusIncident } from '@svc/plugin-statuspages'
import type { IncidentKey } from '../queries/analyses.js'

export interface SubjectAlert {
  id: string
  title: string
  description: string | null
  service: string | null
  priority: string
  status: string
  source: string
  labels: Record<string, unknown>
  /** When it arrived. */
  firstSeenAt: Date
  /** When it began: the sender's start time when it gave one (a late delivery arrives after it), else its arrival. */
  onset: Date
  occurrences: number
}

/**
 * What an investigation is about, whatever surface it came from: an alert, an incident of
 * alerting (its alerts, their services), or a status page incident. `onset` is when it began:
 * deploys before it may have caused it, deploys after it cannot.
 */
export interface Subject {
  kind: 'alert' | 'incident' | 'status_incident'
  id: string
  /** How people name it: `INC-12`, or the alert's title. */
  reference: string
  title: string
  description: string | null
  priority: string
  status: string
  onset: Date
  occurrences: number
  /** The services its alerts are about, in order of onset. */
  services: string[]
  /**
   * The environments its alerts name (label `environment` or `env`, lower case): a deploy to
   * another one cannot have caused them. Empty when none is named.
   */
  environments: string[]
  alerts: SubjectAlert[]
}

const PRIORITY_OF_IMPACT: Record<string, string> = { critical: 'P1', major: 'P2', minor: 'P3', none: 'P4' }

const servicesOf = (alerts: SubjectAlert[]) => [
  ...new Set(alerts.map((alert) => alert.service).filter((service): service is string => service !== null)),
]

type AlertRow = NonNullable<Awaited<ReturnType<typeof incidentUnderInvestigation>>>['alerts'][number]

function asSubjectAlert(row: AlertRow): SubjectAlert {
  const { resolvedAt: _resolved, startedAt, ...alert } = row
  const onset = startedAt && startedAt < row.firstSeenAt ? startedAt : row.firstSeenAt
  return { ...alert, onset, labels: (row.labels ?? {}) as Record<string, unknown> }
}

const environmentsOf = (alerts: SubjectAlert[]) => [
  ...new Set(
    alerts
      .map((alert) => alert.labels.environment ?? alert.labels.env)
      .filter((value): value is string => typeof value === 'string' && value.trim() !== '')
      .map((value) => value.trim().toLowerCase()),
  ),
]

/** The earliest onset of these alerts, or undefined for none. */
const earliestOnset = (alerts: SubjectAlert[]) =>
  alerts.reduce<Date | undefined>((earliest, alert) => (earliest && earliest <= alert.onset ? earliest : alert.onset), undefined)

/**
 * The key a requested analysis is kept under: an alert that is in an incident of alerting is
 * analyzed as its incident (decision 0019, "One incident everywhere"), so an incident has one
 * active analysis whichever id the caller knew, and the analysis names the incident.
 */
export async function analysisKeyOf(db: Executor, key: IncidentKey): Promise<IncidentKey> {
  if (key.sourceProduct !== 'alerting') return key
  const incidentId = await incidentIdOfAlert(db, key.organizationId, key.incidentId)
  return incidentId ? { ...key, incidentId } : key
}

/** The subject an analysis key names; undefined when its surface has no such thing in the organization. */
export async function subjectOf(db: Executor, key: IncidentKey): Promise<Subject | undefined> {
  if (key.sourceProduct === 'statuspages') {
    const incident = await statusIncident(db, key.organizationId, key.incidentId)
    if (!incident) return undefined
    return {
      kind: 'status_incident',
      id: incident.id,
      reference: incident.name,
      title: incident.name,
      description: incident.description,
      priority: PRIORITY_OF_IMPACT[incident.impact] ?? 'P3',
      status: incident.status,
      onset: incident.startedAt,
      occurrences: incident.updates,
      services: incident.service ? [incident.service] : [],
      environments: [],
      alerts: [],
    }
  }
  if (key.sourceProduct !== 'alerting') return undefined
  const alert = await alertUnderInvestigation(db, key.organizationId, key.incidentId)
  if (alert) {
    const { incidentId: _incident, ...row } = alert
    const only = asSubjectAlert(row)
    return {
      kind: 'alert',
      id: alert.id,
      reference: alert.title,
      title: alert.title,
      description: alert.description,
      priority: alert.priority,
      status: alert.status,
      onset: only.onset,
      occurrences: alert.occurrences,
      services: servicesOf([only]),
      environments: environmentsOf([only]),
      alerts: [only],
    }
  }
  const incident = await incidentUnderInvestigation(db, key.organizationId, key.incidentId)
  if (!incident) return undefined
  const alerts = incident.alerts.map(asSubjectAlert)
  const firstAlert = earliestOnset(alerts)
  return {
    kind: 'incident',
    id: incident.id,
    reference: `INC-${incident.number}`,
    title: incident.title,
    description: incident.summary,
    priority: incident.priority,
    status: incident.status,
    onset: firstAlert && firstAlert < incident.startedAt ? firstAlert : incident.startedAt,
    occurrences: alerts.reduce((sum, alert) => sum + alert.occurrences, 0),
    services: servicesOf(alerts),
    environments: environmentsOf(alerts),
    alerts,
  }
}
