import { alertEventTypes, type AlertEventType } from './queries.js'
import { Type } from 'typebox'
import { PaginationQuery, Timestamp } from '@svc/http'
import type { AlertRow, listAlertEvents } from './queries.js'
import { priorities, webhookFormats } from './model.js'

export const statuses = ['open', 'acknowledged', 'resolved'] as const
export const OrgParams = Type.Object({ orgId: Type.String() })
export const AlertParams = Type.Object({ orgId: Type.String(), alertId: Type.String() })
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const NullableId = Type.Union([Type.String({ format: 'uuid' }), Type.Null()])

export const Alert = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    configId: NullableId,
    source: Type.String(),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    priority: Type.Enum(priorities),
    status: Type.Enum(statuses),
    service: Type.Union([Type.String(), Type.Null()]),
    fingerprint: Type.String(),
    groupKey: Type.Union([Type.String(), Type.Null()]),
    groupId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The first alert of its group; null for that first one',
    }),
    occurrences: Type.Integer(),
    labels: Type.Record(Type.String(), Type.String()),
    runbookUrl: Type.Union([Type.String(), Type.Null()], {
      description: 'The runbook its sender named (Alertmanager’s runbook_url annotation, a generic event’s runbookUrl), http(s) only',
    }),
    sourceUrl: Type.Union([Type.String(), Type.Null()], {
      description: 'The source’s own view of the problem (Alertmanager’s generatorURL, PagerDuty’s client_url, Datadog’s link)',
    }),
    firstSeenAt: Timestamp,
    lastSeenAt: Timestamp,
    acknowledgedAt: NullableTimestamp,
    acknowledgedBy: NullableId,
    resolvedAt: NullableTimestamp,
    resolvedBy: NullableId,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Alert' },
)

export const AlertEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: Type.Enum(alertEventTypes, {
      description:
        'escalated: a step paged people; escalation_ended: it paged its last step or had no policy; silenced: a silence held it; priority_changed and command_room_opened: a workflow did it',
    }),
    actorUserId: NullableId,
    data: Type.Record(Type.String(), Type.Unknown()),
    occurrences: Type.Integer({
      minimum: 1,
      description: 'On the `occurred` entry: how many times the alert fired again; its data are the latest firing’s',
    }),
    lastOccurredAt: Type.Union([Timestamp, Type.Null()], { description: 'On the `occurred` entry: the latest repeat' }),
    createdAt: Timestamp,
  },
  { title: 'AlertEvent' },
)

export const AlertQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(Type.Enum(statuses)),
  priority: Type.Optional(Type.Enum(priorities)),
  source: Type.Optional(Type.Enum(webhookFormats)),
  service: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Created before' })),
})

const iso = (value: Date | null) => value?.toISOString() ?? null

export function alertBody(row: AlertRow) {
  return {
    ...row,
    // The table's check constraints hold these to the schema's lists.
    priority: row.priority as (typeof priorities)[number],
    status: row.status as (typeof statuses)[number],
    labels: row.labels as Record<string, string>,
    firstSeenAt: row.firstSeenAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    acknowledgedAt: iso(row.acknowledgedAt),
    resolvedAt: iso(row.resolvedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export function eventBody(event: Awaited<ReturnType<typeof listAlertEvents>>['rows'][number]) {
  return {
    ...event,
    type: event.type as AlertEventType,
    data: event.data as Record<string, unknown>,
    lastOccurredAt: event.lastOccurredAt?.toISOString() ?? null,
    createdAt: event.createdAt.toISOString(),
  }
}

export const AlertIncident = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    reference: Type.String({ description: 'INC-<number>' }),
    title: Type.String(),
    status: Type.String(),
    severity: Type.String(),
    rule: Type.String({ description: 'Why the alert is in it: a correlation rule, declared, manual, split or priority' }),
    score: Type.Number(),
    matched: Type.Record(Type.String(), Type.Unknown(), { description: 'The values the rule matched on' }),
    linkedAt: Timestamp,
  },
  { title: 'AlertIncident' },
)
export const AlertWithIncident = Type.Object(
  { ...Alert.properties, incident: Type.Union([AlertIncident, Type.Null()], { description: 'The incident the alert is in, and why' }) },
  { title: 'AlertWithIncident' },
)
