import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'
import { INCIDENT_STATUSES, ROLE_PATTERN, SEVERITY_KEY_PATTERN } from './model.js'
import { FieldValues } from './shaping/schemas.js'

const Uuid = Type.String({ format: 'uuid' })
const NullableUuid = Type.Union([Uuid, Type.Null()])
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const Status = Type.Enum(INCIDENT_STATUSES, {
  description:
    'triage → investigating → identified → monitoring → resolved; any open status may move to another, a resolved one only back to investigating',
})
const Severity = Type.String({
  pattern: SEVERITY_KEY_PATTERN,
  description:
    'A key of the organization’s severities (GET …/incident-severities; unless it set its own, SEV1, the worst, to SEV4); an alert opens an incident at the most severe one not paging more urgently than itself (P1 → SEV1 … P4/P5 → SEV4)',
})
const TypeKey = Type.String({ minLength: 1, maxLength: 40, description: 'The key of an incident type of the organization' })
const Title = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })
const Summary = NullableString({ maxLength: 5000 })
const RoleName = Type.String({
  pattern: ROLE_PATTERN,
  description: 'commander, communications, scribe, or a role name of the organization’s own (lower-case, up to 40 characters)',
})

export const IncidentParams = Type.Object({ orgId: Type.String(), incidentId: Type.String() })
export const IncidentRoleParams = Type.Object({ orgId: Type.String(), incidentId: Type.String(), role: RoleName })

export const IncidentRole = Type.Object(
  { role: Type.String(), userId: Uuid, email: Type.String(), assignedBy: NullableUuid, assignedAt: Timestamp },
  { title: 'IncidentRole' },
)

const incidentFields = {
  id: Uuid,
  number: Type.Integer({ description: 'The organization’s own sequence' }),
  reference: Type.String({ description: 'INC-<number>' }),
  title: Type.String(),
  summary: Type.Union([Type.String(), Type.Null()]),
  severity: Severity,
  status: Status,
  openedBy: Type.Union([Type.Literal('person'), Type.Literal('alert')], {
    description: 'Declared by a person, or opened by a P1/P2 alert that was in no incident',
  }),
  declaredBy: NullableUuid,
  mergedInto: Type.Union([Uuid, Type.Null()], { description: 'The incident this one was merged into (it is then resolved)' }),
  snoozedUntil: Type.Union([Timestamp, Type.Null()], { description: 'Snoozed: its alerts page again then, and it is back in triage' }),
  type: Type.Union([Type.String(), Type.Null()], { description: 'The key of its incident type; null: none' }),
  fields: Type.Record(Type.String(), Type.Unknown(), { description: 'Its custom field values, by the field’s key' }),
  alertCount: Type.Integer(),
  startedAt: Timestamp,
  detectedAt: Timestamp,
  acknowledgedAt: NullableTimestamp,
  mitigatedAt: NullableTimestamp,
  resolvedAt: NullableTimestamp,
  mttaSeconds: Type.Union([Type.Integer(), Type.Null()], { description: 'From detection to acknowledgement' }),
  mttrSeconds: Type.Union([Type.Integer(), Type.Null()], { description: 'From detection to resolution' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

export const IncidentSummary = Type.Object(incidentFields, { title: 'IncidentSummary' })
export const IncidentResponder = Type.Object(
  {
    userId: Uuid,
    email: Type.String(),
    via: Type.Union([Type.Literal('api'), Type.Literal('chat'), Type.Literal('request')], {
      description: 'api or chat: joined (Slack’s “Join as responder”); request: acknowledged a responder request',
    }),
    addedBy: NullableUuid,
    addedAt: Timestamp,
  },
  { title: 'IncidentResponder' },
)

export const Incident = Type.Object(
  { ...incidentFields, roles: Type.Array(IncidentRole), responders: Type.Array(IncidentResponder) },
  { title: 'Incident' },
)

export const DeclareIncident = Type.Object(
  {
    title: Title,
    summary: Type.Optional(Summary),
    severity: Severity,
    startedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the impact began, if before now' })),
    commanderId: Type.Optional(
      Type.String({ format: 'uuid', description: 'An active member of the organization; the declarer when left out' }),
    ),
    alertIds: Type.Optional(
      Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100, uniqueItems: true, description: 'Alerts in no other incident' }),
    ),
    type: Type.Optional(TypeKey),
    fields: Type.Optional(FieldValues),
  },
  { additionalProperties: false },
)
export type DeclareIncident = Static<typeof DeclareIncident>

export const UpdateIncident = Type.Object(
  {
    title: Type.Optional(Title),
    summary: Type.Optional(Summary),
    severity: Type.Optional(Severity),
    status: Type.Optional(Status),
    type: Type.Optional(Type.Union([TypeKey, Type.Null()], { description: 'Another incident type, or null for none' })),
    fields: Type.Optional(FieldValues),
    statusPages: Type.Optional(
      Type.Boolean({
        description:
          'With `status: resolved`: whether the status page incidents opened for or linked to it are resolved with it, with a published resolved update (default true)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateIncident = Static<typeof UpdateIncident>

export const IncidentQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Union([Type.Literal('open'), Status], { description: '`open` for every status but resolved, or one status' })),
  type: Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: 'Incidents of this type (its key); `none` for those of no type' }),
  ),
  severity: Type.Optional(
    Type.Array(Severity, { maxItems: 10, description: 'Repeatable: incidents of any of these severities (keys, in any letter case)' }),
  ),
  field: Type.Optional(
    Type.Array(Type.String({ minLength: 3, maxLength: 300, pattern: '^[a-z][a-z0-9_]{0,39}:' }), {
      maxItems: 10,
      description:
        '`key:value`, repeatable: incidents whose custom field holds the value (for a multi_select, among its values); every one must hold',
    }),
  ),
})

export const SnoozeIncident = Type.Object(
  {
    minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'From now; at most a week' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'A time in the coming week' })),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
)

export const PutRole = Type.Object({ userId: Type.String({ format: 'uuid' }) }, { additionalProperties: false })

export const TIMELINE_KINDS = [
  'opened',
  'declared',
  'note',
  'status_update',
  'status_changed',
  'severity_changed',
  'updated',
  'type_changed',
  'field_changed',
  'role_assigned',
  'role_removed',
  'responder_joined',
  'snoozed',
  'repaged',
  'responders_requested',
  'reassigned',
  'status_page_incident_linked',
  'alert_linked',
  'alerts_linked',
  'alerts_acknowledged',
  'alerts_resolved',
  'merged',
  'merged_into',
  'split',
  'split_from',
  'follow_up_added',
  'follow_up_updated',
  'task_done',
  'task_undone',
] as const
export const TimelineEntry = Type.Object(
  {
    id: Uuid,
    kind: Type.Enum(TIMELINE_KINDS, {
      description:
        'note and status_update are written by people; the others record a change (its values in `data`), by its author or the system (authorId null)',
    }),
    body: Type.Union([Type.String(), Type.Null()]),
    data: Type.Record(Type.String(), Type.Unknown()),
    authorId: NullableUuid,
    createdAt: Timestamp,
  },
  { title: 'IncidentTimelineEntry' },
)
export const NewTimelineEntry = Type.Object(
  {
    kind: Type.Union([Type.Literal('note'), Type.Literal('status_update')], { default: 'note' }),
    body: Type.String({ minLength: 1, maxLength: 10_000, pattern: '\\S' }),
  },
  { additionalProperties: false },
)
export const TimelineQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
})

export const IncidentAlert = Type.Object(
  {
    alertId: Uuid,
    title: Type.String(),
    priority: Type.String(),
    status: Type.String(),
    service: Type.Union([Type.String(), Type.Null()]),
    rule: Type.String({ description: 'Why the alert is in the incident: declared, manual, or priority (a P1/P2 alert opened it)' }),
    score: Type.Number({ description: 'How strongly the rule matched, 0 to 1' }),
    matched: Type.Record(Type.String(), Type.Unknown(), { description: 'The values the rule matched on' }),
    linkedBy: NullableUuid,
    linkedAt: Timestamp,
  },
  { title: 'IncidentAlert' },
)
export const LinkAlert = Type.Object({ alertId: Type.String({ format: 'uuid' }) }, { additionalProperties: false })

export const MergeIncident = Type.Object(
  { incidentId: Type.String({ format: 'uuid', description: 'The incident merged into this one; it is resolved, its alerts move here' }) },
  { additionalProperties: false },
)
export const SplitIncident = Type.Object(
  {
    alertIds: Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      description: 'Alerts of this incident',
    }),
    title: Title,
    severity: Type.Optional(Severity),
  },
  { additionalProperties: false },
)
export const RelatedIncident = Type.Object(
  {
    incident: IncidentSummary,
    reasons: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal('service'), Type.Literal('dependency'), Type.Literal('deploy'), Type.Literal('label')]),
        detail: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
  },
  { title: 'RelatedIncident' },
)
