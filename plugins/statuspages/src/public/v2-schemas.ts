import { Type, type TSchema } from 'typebox'

// The Statuspage API v2 documents as OpenAPI sees them (the bytes are rendered by v2.ts and sent
// as they were cached, so these schemas document; they do not serialize).
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const Time = Type.String({ format: 'date-time' })

const Page = Type.Object({ id: Type.String(), name: Type.String(), url: Type.String(), time_zone: Type.String(), updated_at: Time })
const Status = Type.Object({
  indicator: Type.Enum(['none', 'minor', 'major', 'critical'] as const),
  description: Type.String({ description: 'e.g. "All Systems Operational", "Partial System Outage"' }),
})
const Component = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.String(),
    created_at: Time,
    updated_at: Time,
    position: Type.Integer(),
    description: Nullable(Type.String()),
    showcase: Type.Boolean(),
    start_date: Nullable(Type.String()),
    group_id: Nullable(Type.String()),
    page_id: Type.String(),
    group: Type.Boolean({ description: 'A group lists its members’ ids in `components`' }),
    only_show_if_degraded: Type.Boolean(),
    components: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'StatuspageComponent' },
)
const Update = Type.Object({
  id: Type.String(),
  status: Type.String(),
  body: Type.String(),
  incident_id: Type.String(),
  created_at: Time,
  updated_at: Time,
  display_at: Time,
  affected_components: Type.Array(
    Type.Object({ code: Type.String(), name: Type.String(), old_status: Type.String(), new_status: Type.String() }),
  ),
  deliver_notifications: Type.Boolean(),
  custom_tweet: Type.Null(),
  tweet_id: Type.Null(),
})
const Incident = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.String(),
    created_at: Time,
    updated_at: Time,
    monitoring_at: Nullable(Time),
    resolved_at: Nullable(Time),
    impact: Type.String(),
    shortlink: Type.String(),
    started_at: Time,
    page_id: Type.String(),
    incident_updates: Type.Array(Update),
    components: Type.Array(Component),
    scheduled_for: Type.Optional(Nullable(Time)),
    scheduled_until: Type.Optional(Nullable(Time)),
  },
  { title: 'StatuspageIncident' },
)
const UptimeComponent = Type.Object({
  id: Type.String(),
  name: Type.String(),
  uptime_percentage: Nullable(Type.Number()),
  days: Type.Array(
    Type.Object({
      date: Type.String(),
      uptime: Nullable(Type.Number()),
      major_outage_seconds: Type.Integer(),
      partial_outage_seconds: Type.Integer(),
      degraded_seconds: Type.Integer(),
      maintenance_seconds: Type.Integer(),
    }),
  ),
})

/** Each JSON document's schema, by its name under `api/v2/`. */
export const v2DocumentSchemas: Record<string, TSchema> = {
  summary: Type.Object({
    page: Page,
    components: Type.Array(Component),
    incidents: Type.Array(Incident),
    scheduled_maintenances: Type.Array(Incident),
    status: Status,
  }),
  status: Type.Object({ page: Page, status: Status }),
  components: Type.Object({ page: Page, components: Type.Array(Component) }),
  incidents: Type.Object({ page: Page, incidents: Type.Array(Incident) }),
  'incidents/unresolved': Type.Object({ page: Page, incidents: Type.Array(Incident) }),
  'scheduled-maintenances': Type.Object({ page: Page, scheduled_maintenances: Type.Array(Incident) }),
  'scheduled-maintenances/upcoming': Type.Object({ page: Page, scheduled_maintenances: Type.Array(Incident) }),
  'scheduled-maintenances/active': Type.Object({ page: Page, scheduled_maintenances: Type.Array(Incident) }),
  uptime: Type.Object({ page: Page, partial_outage_weight: Type.Number(), components: Type.Array(UptimeComponent) }),
}
