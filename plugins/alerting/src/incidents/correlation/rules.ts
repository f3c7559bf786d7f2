import { Type, type Static } from 'typebox'

// Correlation rules (decision 0019, "Correlation"): what makes a new alert join an open incident.
// Each kind has a fixed weight, so rules compare across kinds; a match scores its weight, less
// up to half of it as the matching alert was seen longer ago within the rule's window.

const Window = Type.Integer({ minimum: 1, maximum: 1440, description: 'Minutes: how long ago the matching alert (or deploy) may be' })

export const CorrelationRule = Type.Union(
  [
    Type.Object(
      { kind: Type.Literal('fingerprint') },
      {
        additionalProperties: false,
        description: 'An alert with the same fingerprint is in the incident (an alert that fired again after it was resolved)',
      },
    ),
    Type.Object(
      {
        kind: Type.Literal('labels'),
        labels: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 10, uniqueItems: true }),
        windowMinutes: Window,
      },
      { additionalProperties: false, description: 'An alert in the incident has the same values of all these labels' },
    ),
    Type.Object(
      { kind: Type.Literal('service'), windowMinutes: Window },
      { additionalProperties: false, description: 'An alert of the same service is in the incident' },
    ),
    Type.Object(
      { kind: Type.Literal('deploy'), windowMinutes: Window },
      {
        additionalProperties: false,
        description:
          'The alert came after a deploy of its service (or of a service it depends on), within the window, and so did an alert of the incident',
      },
    ),
    Type.Object(
      { kind: Type.Literal('dependency'), windowMinutes: Window },
      { additionalProperties: false, description: 'An alert in the incident is of a service this one depends on, or that depends on it' },
    ),
  ],
  { title: 'CorrelationRule' },
)
export type CorrelationRule = Static<typeof CorrelationRule>
export type RuleKind = CorrelationRule['kind']

export const RULE_WEIGHTS: Record<RuleKind, number> = { fingerprint: 1, labels: 0.9, service: 0.8, deploy: 0.7, dependency: 0.6 }

/** What an organization that never edited its rules gets: fingerprint, service and dependency within 30 minutes, deploy within an hour. */
export const DEFAULT_RULES: CorrelationRule[] = [
  { kind: 'fingerprint' },
  { kind: 'service', windowMinutes: 30 },
  { kind: 'deploy', windowMinutes: 60 },
  { kind: 'dependency', windowMinutes: 30 },
]

/** A resolved incident is reopened by an alert with the fingerprint of one of its alerts within this many minutes. */
export const REOPEN_MINUTES = 30

/** Weight less up to half of it over the window: a match at the window's edge scores half. */
export function scoreOf(kind: RuleKind, gapSeconds: number, windowMinutes: number | undefined): number {
  const weight = RULE_WEIGHTS[kind]
  if (!windowMinutes) return weight
  const fraction = Math.min(1, Math.max(0, gapSeconds / (windowMinutes * 60)))
  return Math.round(weight * (1 - fraction / 2) * 1000) / 1000
}

export const RuleSet = Type.Object(
  {
    rules: Type.Array(CorrelationRule),
    defaults: Type.Boolean({ description: 'True while the organization has not set rules of its own' }),
    updatedBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'CorrelationRuleSet' },
)
export const PutRuleSet = Type.Object(
  { rules: Type.Array(CorrelationRule, { maxItems: 20, description: 'Tried in order of weight; an empty list turns correlation off' }) },
  { additionalProperties: false },
)
