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

/** An alert was created from an ingested event (not repeated occurrences of it). */
export interface AlertCreated {
  organizationId: string
  alertId: string
  priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'
  /** The webhook config that received it asks for an analysis of every alert it creates. */
  autoAnalysis: boolean
}

export interface EventPayloads {
  'alert.created': AlertCreated
}

export type EventName = keyof EventPayloads
