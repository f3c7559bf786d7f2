import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind, Reference } from '../kind.js'
import { Email, Name, NullableText } from './fields.js'

const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour, in the schedule’s time zone' })
const Layer = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    start: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'The local day of the first turn (YYYY-MM-DD)' }),
    handoffTime: Clock,
    turn: Type.Object(
      { length: Type.Integer({ minimum: 1 }), unit: Type.Enum(['hours', 'days', 'weeks']) },
      { additionalProperties: false },
    ),
    users: Type.Array(Email, { minItems: 1, description: 'Take turns in this order, by e-mail' }),
    restriction: Type.Union(
      [
        Type.Object(
          {
            days: Type.Array(Type.Enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']), { minItems: 1 }),
            from: Clock,
            to: Clock,
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { default: null },
    ),
  },
  { additionalProperties: false },
)
const Override = Type.Object(
  { email: Email, start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }) },
  {
    additionalProperties: false,
    description: 'Who is on call instead, from start until end; ended overrides are history, not configuration',
  },
)
const Schedule = Type.Object(
  {
    name: Name,
    description: NullableText(1000),
    timeZone: Type.String({ minLength: 1, description: 'IANA time zone, e.g. Europe/Berlin' }),
    layers: Type.Array(Layer, { minItems: 1 }),
    overrides: Type.Array(Override, { default: [] }),
  },
  { additionalProperties: false, title: 'Schedule' },
)
type Schedule = Static<typeof Schedule>
type Override = Static<typeof Override>

const iso = (at: string) => new Date(at).toISOString()
const overrideKey = (override: Override) => `${override.email.toLowerCase()} ${iso(override.start)} ${iso(override.end)}`
/** Overrides still to come or under way, in time order: those are configuration; ended ones are history. */
const upcoming = (overrides: Override[], now = Date.now()) =>
  overrides
    .filter((override) => new Date(override.end).getTime() > now)
    .map((override) => ({ email: override.email.toLowerCase(), start: iso(override.start), end: iso(override.end) }))
    .sort((a, b) => a.start.localeCompare(b.start) || a.email.localeCompare(b.email))

async function body(names: Context['names'], schedule: Schedule) {
  const layers = await Promise.all(
    schedule.layers.map(async ({ users, ...layer }) => ({
      ...layer,
      users: await Promise.all(users.map((email) => names.id('people', email.toLowerCase()))),
    })),
  )
  return { name: schedule.name, description: schedule.description, timeZone: schedule.timeZone, layers }
}

/** On-call schedules: layers of people taking turns (by e-mail), and the overrides still to come. */
export const schedules: Kind<Schedule> = {
  noun: 'schedule',
  file: 'schedules.yaml',
  key: 'schedules',
  entry: Schedule,
  names: 'schedules',
  identity: (schedule) => schedule.name,
  normal: (schedule) => ({
    ...schedule,
    layers: schedule.layers.map((layer) => ({ ...layer, users: layer.users.map((email) => email.toLowerCase()) })),
    overrides: upcoming(schedule.overrides),
  }),
  references: (schedule) => [
    ...schedule.layers.flatMap((layer, index) =>
      layer.users.map((email, user): Reference => ({ at: ['layers', index, 'users', user], to: 'people', name: email.toLowerCase() })),
    ),
    ...schedule.overrides.map((override, index): Reference => ({
      at: ['overrides', index, 'email'],
      to: 'people',
      name: override.email.toLowerCase(),
    })),
  ],

  async live({ connection: { api, orgId }, names }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/schedules', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the schedules',
    )
    const emails = await names.names('people')
    return Promise.all(
      rows.map(async (row) => {
        const path = { orgId, scheduleId: row.id }
        const schedule = await answered(
          api.GET('/api/v1/organizations/{orgId}/schedules/{scheduleId}', { params: { path } }),
          `reading the schedule ${row.name}`,
        )
        const overrides = await answered(
          api.GET('/api/v1/organizations/{orgId}/schedules/{scheduleId}/overrides', {
            params: { path, query: { from: new Date().toISOString() } },
          }),
          `reading the overrides of ${row.name}`,
        )
        const layers = schedule.layers.map((layer) => ({ ...layer, users: layer.users.map((userId) => emails.get(userId) ?? userId) }))
        return {
          id: row.id,
          entry: {
            name: schedule.name,
            description: schedule.description,
            timeZone: schedule.timeZone,
            layers: layers as Schedule['layers'],
            overrides: upcoming(overrides.data.map((override) => ({ email: override.email, start: override.start, end: override.end }))),
          },
        }
      }),
    )
  },

  async create(context, schedule) {
    const { api, orgId } = context.connection
    const created = await answered(
      api.POST('/api/v1/organizations/{orgId}/schedules', { params: { path: { orgId } }, body: await body(context.names, schedule) }),
      `creating the schedule ${schedule.name}`,
    )
    await addOverrides(context, created.id, schedule, upcoming(schedule.overrides))
  },

  async update(context, live, schedule) {
    const { api, orgId } = context.connection
    const path = { orgId, scheduleId: live.id }
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/schedules/{scheduleId}', { params: { path }, body: await body(context.names, schedule) }),
      `changing the schedule ${schedule.name}`,
    )
    const wanted = upcoming(schedule.overrides)
    const wantedKeys = new Set(wanted.map(overrideKey))
    const current = await answered(
      api.GET('/api/v1/organizations/{orgId}/schedules/{scheduleId}/overrides', {
        params: { path, query: { from: new Date().toISOString() } },
      }),
      `reading the overrides of ${schedule.name}`,
    )
    const kept = new Set<string>()
    for (const override of current.data) {
      const key = overrideKey(override)
      if (wantedKeys.has(key)) kept.add(key)
      else
        await answered(
          api.DELETE('/api/v1/organizations/{orgId}/schedules/{scheduleId}/overrides/{overrideId}', {
            params: { path: { ...path, overrideId: override.id } },
          }),
          `removing an override of ${schedule.name}`,
        )
    }
    await addOverrides(
      context,
      live.id,
      schedule,
      wanted.filter((override) => !kept.has(overrideKey(override))),
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/schedules/{scheduleId}', { params: { path: { orgId, scheduleId: live.id } } }),
      `deleting the schedule ${live.entry.name}`,
    )
  },
}

async function addOverrides({ connection: { api, orgId }, names }: Context, scheduleId: string, schedule: Schedule, overrides: Override[]) {
  for (const override of overrides)
    await answered(
      api.POST('/api/v1/organizations/{orgId}/schedules/{scheduleId}/overrides', {
        params: { path: { orgId, scheduleId } },
        body: { userId: await names.id('people', override.email), start: override.start, end: override.end },
      }),
      `adding an override to ${schedule.name}`,
    )
}
