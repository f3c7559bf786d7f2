import { Type } from 'typebox'
import { PaginationQuery, Timestamp } from '@svc/http'
import { severities } from '@svc/ai'
import type { AnalysisRow, listAnalysisEvents } from '../queries/analyses.js'
import { Findings } from '../investigation/findings.js'

export const analysisStatuses = ['pending', 'processing', 'completed', 'failed'] as const
export const sourceProducts = ['alerting', 'synthetics', 'statuspages'] as const
const eventTypes = ['requested', 'processing', 'step', 'retry_scheduled', 'completed', 'failed'] as const

export const OrgParams = Type.Object({ orgId: Type.String() })
export const InsightParams = Type.Object({ orgId: Type.String(), insightId: Type.String() })
const NullableString = Type.Union([Type.String(), Type.Null()])
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])

export const Insight = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organizationId: Type.String({ format: 'uuid' }),
    sourceProduct: Type.Enum(sourceProducts),
    incidentId: Type.String({ format: 'uuid' }),
    trigger: Type.Enum(['automatic', 'manual', 'reinvestigation'] as const, {
      description: 'reinvestigation: asked for again because the incident changed (services joined, a suspect deploy rolled back)',
    }),
    requestedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The user who asked for it; null when automatic',
    }),
    status: Type.Enum(analysisStatuses),
    summary: NullableString,
    rootCause: NullableString,
    recommendations: Type.Union([Type.String(), Type.Null()], { description: 'A Markdown bullet list, most useful first' }),
    severity: Type.Union([Type.Enum(severities), Type.Null()]),
    suspectedDeployId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The deploy the analysis holds responsible',
    }),
    subject: Type.Enum(['alert', 'incident', 'status_incident'] as const, {
      description: 'What was investigated: an alert, an incident of alerting, or a status page incident',
    }),
    findings: Type.Union([Findings, Type.Null()], {
      description: 'The structured findings: suspect deploys, probable cause with category and confidence, evidence by resource id',
    }),
    evidence: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'What the tools returned: dependencies, alerts, deploys (scored), configChanges, checks, components, similar',
    }),
    provider: Type.Union([Type.Enum(['offline', 'openai'] as const), Type.Null()]),
    model: NullableString,
    tokens: Type.Object({ prompt: Type.Integer(), completion: Type.Integer() }),
    attempts: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed' }),
    createdAt: Timestamp,
    startedAt: NullableTimestamp,
    completedAt: NullableTimestamp,
  },
  { title: 'Insight' },
)

export const InsightEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: Type.Enum(eventTypes),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'For a step: {attempt, step, tool (null for the answer), input, output (JSON, cut at 6,000 characters), reasoning}',
    }),
    createdAt: Timestamp,
  },
  { title: 'InsightEvent' },
)

export const InsightQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(Type.Enum(analysisStatuses)),
  severity: Type.Optional(Type.Enum(severities)),
  sourceProduct: Type.Optional(Type.Enum(sourceProducts)),
  incidentId: Type.Optional(Type.String({ format: 'uuid' })),
})

export const InsightRequest = Type.Object(
  {
    incidentId: Type.String({ format: 'uuid' }),
    sourceProduct: Type.Enum(sourceProducts),
  },
  { additionalProperties: false },
)

export const InsightStats = Type.Object(
  {
    byStatus: Type.Record(Type.Enum(analysisStatuses), Type.Integer()),
    bySeverity: Type.Record(Type.Enum(severities), Type.Integer()),
    total: Type.Integer(),
    meanSecondsToCompletion: Type.Union([Type.Number(), Type.Null()], {
      description: 'From request to completion, over completed analyses',
    }),
    tokens: Type.Object({ prompt: Type.Integer(), completion: Type.Integer(), total: Type.Integer() }),
  },
  { title: 'InsightStats' },
)
export const StatsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Requested at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Requested before' })),
})

const iso = (value: Date | null) => value?.toISOString() ?? null

export function insightBody(row: AnalysisRow) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    sourceProduct: row.sourceProduct as (typeof sourceProducts)[number],
    incidentId: row.incidentId,
    trigger: row.trigger as 'automatic' | 'manual' | 'reinvestigation',
    requestedBy: row.requestedBy,
    status: row.status as (typeof analysisStatuses)[number],
    summary: row.summary,
    rootCause: row.rootCause,
    recommendations: row.recommendations,
    severity: row.severity as (typeof severities)[number] | null,
    suspectedDeployId: row.suspectedDeployId,
    subject: row.subject as 'alert' | 'incident' | 'status_incident',
    findings: row.findings as Findings | null,
    evidence: row.evidence as Record<string, unknown> | null,
    provider: row.provider as 'offline' | 'openai' | null,
    model: row.model,
    tokens: { prompt: row.promptTokens, completion: row.completionTokens },
    attempts: row.attempts,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
  }
}

export function insightEventBody(row: Awaited<ReturnType<typeof listAnalysisEvents>>[number]) {
  return {
    id: row.id,
    type: row.type as (typeof eventTypes)[number],
    data: row.data as Record<string, unknown>,
    createdAt: row.createdAt.toISOString(),
  }
}
