import type { AlertPriority } from './payloads.js'

export type IncidentSeverity = 'SEV1' | 'SEV2' | 'SEV3' | 'SEV4'

// How an alert's priority and an incident's severity correspond, declared once for the product:
// an alert opens an incident of its severity, a responder request pages at its incident's
// priority, and an investigation of an incident ranks it as an alert of that priority.
const SEVERITY_OF_PRIORITY: Readonly<Record<AlertPriority, IncidentSeverity>> = {
  P1: 'SEV1',
  P2: 'SEV2',
  P3: 'SEV3',
  P4: 'SEV4',
  P5: 'SEV4',
}
const PRIORITY_OF_SEVERITY: Readonly<Record<IncidentSeverity, AlertPriority>> = { SEV1: 'P1', SEV2: 'P2', SEV3: 'P3', SEV4: 'P4' }

/** P1 → SEV1 … P4 and P5 → SEV4; anything else is the mildest. */
export function severityOfPriority(priority: string): IncidentSeverity {
  return Object.hasOwn(SEVERITY_OF_PRIORITY, priority) ? SEVERITY_OF_PRIORITY[priority as AlertPriority] : 'SEV4'
}

/** SEV1 → P1 … SEV4 → P4; undefined for a word that is no severity. */
export function priorityOfSeverity(severity: string): AlertPriority | undefined {
  return Object.hasOwn(PRIORITY_OF_SEVERITY, severity) ? PRIORITY_OF_SEVERITY[severity as IncidentSeverity] : undefined
}
