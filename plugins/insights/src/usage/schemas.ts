import { Type } from 'typebox'
import { NullableNumber, Timestamp } from '@svc/http'

const NullableLimit = (description: string) => NullableNumber(Type.Integer({ minimum: 0, description }))

export const Limits = Type.Object({
  monthlyAnalyses: NullableLimit('Analyses per calendar month (UTC); null: unlimited'),
  monthlyTokens: NullableLimit('Model tokens per month, prompt and completion; null: the default cap (AI_DEFAULT_MONTHLY_TOKENS)'),
  monthlyCostUsd: NullableNumber(
    Type.Number({
      minimum: 0,
      description: 'Estimated model cost per month in US dollars; null: the default cap (AI_DEFAULT_MONTHLY_COST_USD)',
    }),
  ),
})

const Thresholds = Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
  maxItems: 10,
  uniqueItems: true,
  description: 'Percentages of the limits; crossing one records a threshold_crossed event, once per period',
})

export const Usage = Type.Object(
  {
    period: Type.Object({ start: Timestamp, end: Timestamp }),
    usage: Type.Object({
      analyses: Type.Integer(),
      promptTokens: Type.Integer(),
      completionTokens: Type.Integer(),
      tokens: Type.Integer(),
      estimatedCostUsd: Type.Number(),
    }),
    limits: Limits,
    effectiveLimits: Type.Object(Limits.properties, {
      description: 'The limits that apply: the organization’s own, else the default caps',
    }),
    reserved: Type.Object(
      { tokens: Type.Integer(), estimatedCostUsd: Type.Number() },
      { description: 'Held for model calls under way: counted against the limits until their jobs write the ledger' },
    ),
    alertThresholds: Thresholds,
    percentUsed: Type.Union([Type.Number(), Type.Null()], { description: 'Of the most used limit; null when there are none' }),
    limitReached: Type.Union([Type.Enum(['analyses', 'tokens', 'cost'] as const), Type.Null()], {
      description: 'When set, automatic analyses are skipped and manual ones refused (402 BUDGET_EXCEEDED) until the next period',
    }),
    events: Type.Array(
      Type.Object({
        type: Type.Enum(['threshold_crossed', 'analysis_skipped'] as const),
        threshold: Type.Union([Type.Integer(), Type.Null()]),
        data: Type.Record(Type.String(), Type.Unknown()),
        createdAt: Timestamp,
      }),
      { description: 'This period’s threshold crossings and skipped analyses, oldest first: the page `page` and `limit` ask for' },
    ),
    eventsMeta: Type.Object(
      { page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() },
      { description: 'The events’ page, and how many there are' },
    ),
  },
  { title: 'Usage' },
)

export const UsagePatch = Type.Object(
  {
    limits: Type.Optional(Type.Partial(Limits, { additionalProperties: false })),
    alertThresholds: Type.Optional(Thresholds),
  },
  { additionalProperties: false, minProperties: 1 },
)
