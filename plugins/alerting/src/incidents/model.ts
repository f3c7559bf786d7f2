// The incident's state machine and severities (decision 0019). Kept apart from the routes so the
// rule reads in one place and the correlation that opens incidents uses the same one.

export const INCIDENT_STATUSES = ['triage', 'investigating', 'identified', 'monitoring', 'resolved'] as const
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number]
export const OPEN_STATUSES: ReadonlySet<IncidentStatus> = new Set(['triage', 'investigating', 'identified', 'monitoring'])

/** A key of the organization's severities (shaping/severities.ts): SEV1 to SEV4 unless it set its own. */
export type Severity = string
export const SEVERITY_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$'

/** Roles every organization has; it may name others of its own (lower-case words). */
export const BUILT_IN_ROLES = ['commander', 'communications', 'scribe'] as const
export const ROLE_PATTERN = '^[a-z][a-z0-9_-]{0,39}$'

/**
 * Which moves are allowed: an open incident may go to any other open status (a fix that did not
 * hold sends `monitoring` back to `investigating`) or be resolved; a resolved one may only be
 * reopened, to `investigating`. Answers why a move is refused, or undefined.
 */
export function refusedTransition(from: IncidentStatus, to: IncidentStatus): string | undefined {
  if (from === to) return `the incident is already ${to}`
  if (from === 'resolved' && to !== 'investigating') return 'a resolved incident can only be reopened, to investigating'
  return undefined
}

interface Milestones {
  acknowledgedAt: Date | null
  mitigatedAt: Date | null
  resolvedAt: Date | null
}

/**
 * The times a move sets: acknowledged when it first leaves triage, mitigated when it first reaches
 * monitoring (or is resolved without it), resolved when resolved; reopening clears the resolution.
 */
export function milestonesAfter(current: Milestones, to: IncidentStatus, now: Date): Milestones {
  return {
    acknowledgedAt: current.acknowledgedAt ?? (to === 'triage' ? null : now),
    mitigatedAt: current.mitigatedAt ?? (to === 'monitoring' || to === 'resolved' ? now : null),
    resolvedAt: to === 'resolved' ? now : null,
  }
}

const seconds = (from: Date, to: Date | null) => (to ? Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000)) : null)

/** Time to acknowledge and to resolve, from detection, in seconds (null until reached). */
export function responseTimes(incident: { detectedAt: Date } & Milestones) {
  return {
    mttaSeconds: seconds(incident.detectedAt, incident.acknowledgedAt),
    mttrSeconds: seconds(incident.detectedAt, incident.resolvedAt),
  }
}
