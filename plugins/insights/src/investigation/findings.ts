import { Type, type Static } from 'typebox'
import { severities } from '@svc/ai'

// The structured output of an investigation (decision 0021, "Findings"): the same schema is the
// model's strict response format and the offline planner's result, so both read alike.

export const causeCategories = ['deploy', 'dependency', 'capacity', 'configuration', 'external', 'unknown'] as const
export type CauseCategory = (typeof causeCategories)[number]
export const resourceTypes = ['deploy', 'alert', 'check', 'status_component', 'incident', 'analysis', 'rca', 'service'] as const

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])

export const SuspectDeploy = Type.Object(
  {
    deployId: Type.String({ description: 'The id of a deploy event a tool returned' }),
    service: Type.String(),
    version: Nullable(Type.String()),
    score: Type.Number({ description: '0 to 1: how strongly the evidence points at it' }),
    reasons: Type.Array(Type.String()),
  },
  { additionalProperties: false, title: 'SuspectDeploy' },
)

export const EvidenceItem = Type.Object(
  {
    claim: Type.String(),
    resources: Type.Array(Type.Object({ type: Type.Enum(resourceTypes), id: Type.String() }, { additionalProperties: false }), {
      description: 'What the claim rests on, by resource id',
    }),
  },
  { additionalProperties: false, title: 'EvidenceItem' },
)

export const Findings = Type.Object(
  {
    summary: Type.String({ description: 'Two or three sentences: what is failing, where, since when' }),
    suspectDeploys: Type.Array(SuspectDeploy, {
      description: 'Deploys the evidence points at, most likely first; empty when none does (never the latest one by default)',
    }),
    probableCause: Type.Object(
      {
        category: Type.Enum(causeCategories),
        confidence: Type.Number({ description: '0 to 1' }),
        statement: Type.String(),
        service: Nullable(Type.String({ description: 'The service the cause lies in, when known' })),
      },
      { additionalProperties: false },
    ),
    evidence: Type.Array(EvidenceItem),
    recommendations: Type.Array(Type.String(), { description: 'Concrete next steps, most useful first' }),
    severity: Type.Enum(severities),
  },
  { additionalProperties: false, title: 'Findings' },
)
export type Findings = Static<typeof Findings>
export type SuspectDeploy = Static<typeof SuspectDeploy>
