import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'
import { weekdays } from './rotation.js'

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour, in the schedule’s time zone' })
const UserId = Type.String({ format: 'uuid' })

export const ScheduleParams = Type.Object({ orgId: Type.String(), scheduleId: Type.String() })
export const OverrideParams = Type.Object({ orgId: Type.String(), scheduleId: Type.String(), overrideId: Type.String() })

export const Layer = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    start: Type.String({ format: 'date', description: 'The local day of the first turn (YYYY-MM-DD)' }),
    handoffTime: Clock,
    turn: Type.Object(
      {
        length: Type.Integer({ minimum: 1, maximum: 366 }),
        unit: Type.Enum(['hours', 'days', 'weeks'], {
          description: 'Days and weeks are calendar days in the schedule’s zone (hand-offs keep their local time); hours are elapsed hours',
        }),
      },
      { additionalProperties: false },
    ),
    users: Type.Array(UserId, { minItems: 1, maxItems: 100, description: 'Take turns in this order; a user may appear more than once' }),
    restriction: Type.Union(
      [
        Type.Object(
          {
            days: Type.Array(Type.Enum(weekdays), { minItems: 1, uniqueItems: true }),
            from: Clock,
            to: Type.Unsafe<string>({ ...Clock, description: 'Not after `from`: the window runs past midnight into the next day' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { default: null, description: 'When set, the layer covers only these windows' },
    ),
  },
  { additionalProperties: false, title: 'ScheduleLayer' },
)
export type LayerBody = Static<typeof Layer>

const Layers = Type.Array(Layer, { minItems: 1, maxItems: 10, description: 'Later layers cover earlier ones where both have someone' })
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' })

export const CreateSchedule = Type.Object(
  { name: Name, description: Type.Optional(NullableString({ maxLength: 1000 })), timeZone: TimeZone, layers: Layers },
  { additionalProperties: false },
)
export type CreateSchedule = Static<typeof CreateSchedule>

export const UpdateSchedule = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(NullableString({ maxLength: 1000 })),
    timeZone: Type.Optional(TimeZone),
    layers: Type.Optional(Layers),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateSchedule = Static<typeof UpdateSchedule>

const scheduleFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  timeZone: Type.String(),
  createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}
export const Schedule = Type.Object({ ...scheduleFields, layers: Type.Array(Layer) }, { title: 'Schedule' })
export const ScheduleSummary = Type.Object({ ...scheduleFields, layerCount: Type.Integer() }, { title: 'ScheduleSummary' })

export const ScheduleQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Names containing this, any letter case' })),
})

export const CreateOverride = Type.Object(
  { userId: UserId, start: Timestamp, end: Timestamp },
  { additionalProperties: false, description: 'The user is on call instead of whoever the layers say, from start until end' },
)

export const Override = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    userId: UserId,
    email: Type.String(),
    start: Timestamp,
    end: Timestamp,
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'ScheduleOverride' },
)

/** A range of time; 93 days at most, so a quarter fits in one answer. */
export const MAX_RANGE_DAYS = 93
export const RangeQuery = Type.Object({
  from: Timestamp,
  to: Type.Unsafe<string>({ ...Timestamp, description: `After from, at most ${MAX_RANGE_DAYS} days later` }),
})
export const OverrideQuery = Type.Object({
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
})

export const Shift = Type.Object(
  { userId: UserId, email: Type.String(), start: Timestamp, end: Timestamp },
  { title: 'Shift', description: 'One person on call from start until end (exclusive)' },
)
export const ShiftList = Type.Object({ from: Timestamp, to: Timestamp, timeZone: Type.String(), data: Type.Array(Shift) })

export const OnCallQuery = Type.Object({ at: Type.Optional(Type.Unsafe<string>({ ...Timestamp, description: 'Default: now' })) })
export const OnCall = Type.Object(
  {
    at: Timestamp,
    onCall: Type.Union([Shift, Type.Null()], {
      description:
        'Who is on call at that moment, with the shift they are in (its bounds looked for up to 31 days either side); null: nobody',
    }),
  },
  { title: 'OnCall' },
)
