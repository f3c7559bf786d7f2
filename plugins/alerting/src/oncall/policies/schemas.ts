import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })

export const MAX_STEPS = 20
export const MAX_REPEATS = 5
export const targetTypes = ['user', 'schedule', 'team', 'chat', 'webhook'] as const
export type TargetType = (typeof targetTypes)[number]

export const PolicyParams = Type.Object({ orgId: Type.String(), policyId: Type.String() })

export const Target = Type.Object(
  {
    type: Type.Enum(targetTypes, {
      description:
        'user: that person; schedule: whoever is on call in it then; team: its members with the team role responder; chat: a chat integration; webhook: an outbound webhook (event alert.escalated)',
    }),
    id: Type.String({ format: 'uuid' }),
  },
  { additionalProperties: false, title: 'EscalationTarget' },
)
export type Target = Static<typeof Target>

export const Step = Type.Object(
  {
    delayMinutes: Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'How long to wait for an acknowledgement after this step pages before the next step (or the next round)',
    }),
    targets: Type.Array(Target, { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false, title: 'EscalationStep' },
)
export type Step = Static<typeof Step>

const Steps = Type.Array(Step, { minItems: 1, maxItems: MAX_STEPS, description: `1 to ${MAX_STEPS} steps, in order` })
const Repeat = Type.Integer({
  minimum: 0,
  maximum: MAX_REPEATS,
  description: `How many more times the steps run from the first after the last, unacknowledged (0 to ${MAX_REPEATS})`,
})

const AckTimeout = Type.Union([Type.Integer({ minimum: 1, maximum: 1440 }), Type.Null()], {
  description:
    'Minutes an acknowledged alert (or incident) may stay unresolved before it is open again and pages from the first step; null (the default): never',
})

export const CreatePolicy = Type.Object(
  {
    name: Name,
    description: Type.Optional(NullableString({ maxLength: 1000 })),
    repeat: Type.Optional(Repeat),
    ackTimeoutMinutes: Type.Optional(AckTimeout),
    steps: Steps,
  },
  { additionalProperties: false },
)
export type CreatePolicy = Static<typeof CreatePolicy>

export const UpdatePolicy = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(NullableString({ maxLength: 1000 })),
    repeat: Type.Optional(Repeat),
    ackTimeoutMinutes: Type.Optional(AckTimeout),
    steps: Type.Optional(Steps),
  },
  { additionalProperties: false, minProperties: 1 },
)

const policyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  repeat: Type.Integer(),
  ackTimeoutMinutes: Type.Union([Type.Integer(), Type.Null()]),
  createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  problems: Type.Array(Type.String(), {
    description: 'What keeps the policy from paging anyone, e.g. a step left without targets after its schedule was deleted',
  }),
}
/** Stored steps may have lost targets to deletions (a created step has at least one). */
const StoredStep = Type.Object({ delayMinutes: Type.Integer(), targets: Type.Array(Target) }, { title: 'EscalationStepAsStored' })
export const Policy = Type.Object({ ...policyFields, steps: Type.Array(StoredStep) }, { title: 'EscalationPolicy' })
export const PolicySummary = Type.Object({ ...policyFields, stepCount: Type.Integer() }, { title: 'EscalationPolicySummary' })

export const PolicyQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Names containing this, any letter case' })),
})
