import { Type } from 'typebox'
import { Timestamp } from '@svc/http'
import { Matchers, NarrowMatchers } from '../policies/routing.js'

export const silenceStates = ['active', 'pending', 'expired'] as const
export const SilenceParams = Type.Object({ orgId: Type.String(), silenceId: Type.String() })
const Comment = Type.String({
  minLength: 1,
  maxLength: 500,
  pattern: '\\S',
  description: 'Why, e.g. "database maintenance, ticket OPS-12"',
})

export const CreateSilence = Type.Object(
  {
    comment: Comment,
    matchers: NarrowMatchers,
    startsAt: Type.Optional(Type.Unsafe<string>({ ...Timestamp, description: 'Default: now' })),
    endsAt: Type.Unsafe<string>({ ...Timestamp, description: 'In the future, after startsAt' }),
  },
  { additionalProperties: false },
)

export const UpdateSilence = Type.Object(
  {
    comment: Type.Optional(Comment),
    matchers: Type.Optional(NarrowMatchers),
    startsAt: Type.Optional(Timestamp),
    endsAt: Type.Optional(Timestamp),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const Silence = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    comment: Type.String(),
    matchers: Matchers,
    startsAt: Timestamp,
    endsAt: Timestamp,
    state: Type.Enum(silenceStates, { description: 'pending: not started; active: in force; expired: over' }),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    statusMaintenanceId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description:
        'The status page maintenance that holds this silence over its window (its changes move the silence; it cannot be changed here, only deleted)',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Silence' },
)

export const SilenceQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  state: Type.Optional(Type.Enum(silenceStates)),
})
