import type { Executor } from '@svc/db'

// What reports read of the product surfaces, wired in by the platform service from each
// surface's read module (ARCHITECTURE.md, "Between surfaces"): the platform never queries
// their tables itself.

export interface ResponseStats {
  incidents: number
  acknowledged: number
  resolved: number
  mttaSeconds: number | null
  mttrSeconds: number | null
}

/**
 * Alerting: the incidents detected in [from, to), aggregated over all of them (times from
 * detection, as each incident shows them), the first `rowLimit`, and the alerts received.
 */
export type IncidentReader = (
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
  rowLimit: number,
) => Promise<{
  totals: ResponseStats
  bySeverity: Array<ResponseStats & { severity: string }>
  byService: Array<ResponseStats & { service: string | null }>
  perDay: Array<{ day: string; incidents: number }>
  rows: Array<{
    id: string
    number: number
    title: string
    severity: string
    status: string
    services: string[]
    alerts: number
    detectedAt: Date
    acknowledgedAt: Date | null
    resolvedAt: Date | null
    secondsToAcknowledge: number | null
    secondsToResolve: number | null
    /** Its incident type's key, or null. */
    type: string | null
    /** Its custom field values, by key. */
    fields: Record<string, unknown>
  }>
  alertsReceived: number
}>

/** Status pages: each component's uptime over [from, to), by UTC day. */
export type ComponentUptimeReader = (
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
) => Promise<{
  partialOutageWeight: number
  components: Array<{
    name: string
    pageName: string
    uptimePercentage: number | null
    majorOutageSeconds: number
    partialOutageSeconds: number
    maintenanceSeconds: number
    days: Array<{ date: string; majorOutageSeconds: number; partialOutageSeconds: number }>
  }>
}>

/** Synthetics: each check's availability over [from, to). */
export type CheckAvailabilityReader = (
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
) => Promise<Array<{ name: string; kind: string; state: string; runs: number; failures: number; availability: number | null }>>

/** Insights: AI consumption over [from, to). */
export type AiUsageReader = (
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
) => Promise<{
  totals: AiSpend
  byModel: Array<AiSpend & { feature: string; provider: string; model: string }>
  perDay: Array<AiSpend & { day: string }>
}>

export interface AiSpend {
  requests: number
  promptTokens: number
  completionTokens: number
  costUsd: number
}

export interface ReportSources {
  incidents: IncidentReader
  componentUptime: ComponentUptimeReader
  checkAvailability: CheckAvailabilityReader
  aiUsage: AiUsageReader
}
