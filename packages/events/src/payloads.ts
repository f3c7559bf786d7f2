/**
 * The events surfaces publish to each other through the job queue (ARCHITECTURE.md,
 * "Between surfaces"), one payload type per event name. A consumer may see an event twice,
 * so every payload carries the ids a handler needs to be idempotent.
 */

/** An incident reference: which surface, and the incident's id there. */
export interface IncidentReference {
  sourceProduct: 'alerting' | 'synthetics' | 'statuspages'
  incidentId: string
}

export type AlertPriority = 'P1' | 'P2' | 'P3' | 'P4' | 'P5'

/** An alert was created from an ingested event (not repeated occurrences of it). */
export interface AlertCreated {
  organizationId: string
  alertId: string
  priority: AlertPriority
  /** The webhook config that received it asks for an analysis of every alert it creates. */
  autoAnalysis: boolean
}

/**
 * The urgent priorities, declared once for the product: a P1 or P2 alert opens an incident (when
 * it is in none), has a command room and gets an analysis.
 */
export const URGENT_PRIORITIES: ReadonlySet<string> = new Set<AlertPriority>(['P1', 'P2'])

/**
 * Whether a new alert gets an automatic analysis: the one rule alerting (which announces
 * `alert.created` only then) and insights (which analyzes on it) both follow.
 */
export function alertGetsAnalysis(alert: Pick<AlertCreated, 'priority' | 'autoAnalysis'>): boolean {
  return alert.autoAnalysis || URGENT_PRIORITIES.has(alert.priority)
}

/** A person left an organization (removed by an admin, or deprovisioned over SCIM). */
export interface MemberRemoved {
  organizationId: string
  userId: string
}

/** A deploy pipeline reported a deploy (not a redelivery of one already recorded). */
export interface DeployRecorded {
  organizationId: string
  deployEventId: string
  service: string
  /** A release, a configuration change, or a rollback (absent in events recorded before kinds existed). */
  kind?: 'deploy' | 'config' | 'rollback'
}

/** An incident of alerting changed in a way its investigation should see (services joined it). */
export interface IncidentChanged {
  organizationId: string
  incidentId: string
  reason: 'services_joined'
  services: string[]
}

/** An analysis finished with its findings (not a failed one). */
export interface AnalysisCompleted {
  organizationId: string
  analysisId: string
  incident: IncidentReference
}

/**
 * A workflow asked the status pages to follow an alert (its `update_status_page` action): the
 * pages whose components are linked to the alert's service open, update or resolve an incident
 * for it, a draft unless `publish`.
 */
export interface StatusPageUpdateRequested {
  organizationId: string
  alertId: string
  /** The workflow run that asked, for the incident's record. */
  workflowId: string
  workflowName: string
  trigger: 'alert.created' | 'alert.acknowledged' | 'alert.resolved'
  alert: { title: string; service: string; priority: AlertPriority }
  /** Every name of the alert's catalog service (key and aliases), the alert's own first; absent before 2026-12-02. */
  services?: string[]
  componentStatus: 'degraded_performance' | 'partial_outage' | 'major_outage'
  publish: boolean
}

/** A synthetic check's state as its alert rule judges it (issue 16). */
export type CheckState = 'unknown' | 'passing' | 'degraded' | 'failing'

/**
 * A synthetic check changed state. `check.failed` when it became failing, `check.recovered` when
 * it stopped failing, `check.state_changed` on every change (status page components follow it).
 */
export interface CheckStateChanged {
  organizationId: string
  checkId: string
  name: string
  kind: string
  /** What it checks, for people: a URL, host:port or DNS name. */
  target: string
  state: CheckState
  previous: CheckState
  /** The regions failing when it was judged. */
  failingRegions: string[]
  /** Why each failing region failed, by its latest run (`HTTP 503`, `status code 503, expected equals 200`, `timed out after 5000 ms`). */
  failures?: Array<{ region: string; reason: string }>
  /** The check's alert rule: the alert's priority and the escalation policy it pages with (none: unrouted). */
  priority: AlertPriority
  escalationPolicyId: string | null
  statusComponentIds: string[]
  /** The service the check belongs to, whose alert its failure is; null or absent (before 2026-12-02): none, the alert carries its name. */
  service?: string | null
  /** When it was judged (ISO 8601): a consumer applies only the latest of a check's events. */
  at: string
}

/**
 * A status update of an incident of alerting, to publish on the status pages whose components
 * follow its services (and on the status page incidents linked to it): the status pages surface
 * opens its own incident there, or updates the one it opened.
 */
export interface StatusPageIncidentUpdateRequested {
  organizationId: string
  incidentId: string
  /** The timeline entry that carries the update: a consumer records each once. */
  updateId: string
  /** The public name of a status page incident this update opens; null: the page names it after its affected components. */
  name: string | null
  /** The incident's severity, a key of its organization's severities (SEV1 to SEV4 unless it set its own). */
  severity: string
  /** The alert priority the severity pages at, which the status pages take the impact from; absent before 2026-12-03 (then read from a SEV1–SEV4 severity). */
  priority?: 'P1' | 'P2' | 'P3' | 'P4'
  /** Its alerts' services, and every other name of their catalog services. */
  services: string[]
  /** Status page incidents correlation linked to the incident, updated too. */
  statusIncidentIds: string[]
  status: 'investigating' | 'identified' | 'monitoring' | 'resolved'
  /** Empty when a template gives the words. */
  body: string
  /**
   * The key of an incident template: each page with one by that key takes its title, body and
   * component statuses from it (the body given here still wins); other pages take the body.
   */
  template?: string
  /** Whether a status page incident opened for it is published at once (else a draft). */
  publish: boolean
  /** Who asked; null when the incident resolved because its alerts did. */
  authorId: string | null
}

/** A person opened an incident on a status page: alerting may correlate it with one of its own. */
export interface StatusPageIncidentOpened {
  organizationId: string
  statusIncidentId: string
  pageId: string
  name: string
  /** The alert services its components follow. */
  services: string[]
  at: string
}

/**
 * A follow-up's ticket changed in its tracker (the tracker's signed webhook, decision 0031): an
 * RCA action item's ticket moves its item (insights), as an incident's moves its follow-up.
 */
export interface TicketStatusChanged {
  organizationId: string
  followUpId: string
  /** The incident whose follow-up it is, or null for an RCA action item's ticket. */
  incidentId: string | null
  rcaActionItemId: string | null
  ticketKey: string
  /** As the tracker names it, e.g. "In Progress". */
  ticketStatus: string
  /** Whether the tracker counts the ticket done. */
  done: boolean
}

export interface EventPayloads {
  'alert.created': AlertCreated
  'analysis.completed': AnalysisCompleted
  'check.failed': CheckStateChanged
  'check.recovered': CheckStateChanged
  'check.state_changed': CheckStateChanged
  'deploy.recorded': DeployRecorded
  'incident.changed': IncidentChanged
  'member.removed': MemberRemoved
  'statuspage.update_requested': StatusPageUpdateRequested
  'statuspage.incident_update_requested': StatusPageIncidentUpdateRequested
  'statuspage.incident_opened': StatusPageIncidentOpened
  'ticket.status_changed': TicketStatusChanged
}

export type EventName = keyof EventPayloads
