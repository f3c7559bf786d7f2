import { Type, type Static } from 'typebox'
import { PaginationQuery, Timestamp } from '@svc/http'
import { narrativeFields, type ActionItemRow, type LinkRow, type NarrativeField, type RcaRow } from '../queries/rcas.js'
import { sourceProducts } from '../analyses/schemas.js'

export const rcaStatuses = ['draft', 'in_review', 'published'] as const
export type RcaStatus = (typeof rcaStatuses)[number]
export const actionItemStatuses = ['open', 'in_progress', 'done', 'wont_do'] as const
export const actionItemPriorities = ['low', 'medium', 'high', 'urgent'] as const

/** draft → in_review → published, and in_review → draft; a published document stays published. */
export const RCA_TRANSITIONS: Record<RcaStatus, RcaStatus[]> = { draft: ['in_review'], in_review: ['draft', 'published'], published: [] }

export const RcaParams = Type.Object({ orgId: Type.String(), rcaId: Type.String() })
export const LinkParams = Type.Object({ orgId: Type.String(), rcaId: Type.String(), linkId: Type.String() })
export const ItemParams = Type.Object({ orgId: Type.String(), rcaId: Type.String(), itemId: Type.String() })

const NullableText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()])
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const NullableId = Type.Union([Type.String({ format: 'uuid' }), Type.Null()])
const Title = Type.String({ minLength: 1, maxLength: 300 })
const Narrative = {
  summary: NullableText(20_000),
  rootCause: NullableText(20_000),
  impact: NullableText(20_000),
  timeline: NullableText(50_000),
}

export const Rca = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organizationId: Type.String({ format: 'uuid' }),
    title: Type.String(),
    status: Type.Enum(rcaStatuses),
    ...Narrative,
    createdBy: NullableId,
    aiDrafted: Type.Boolean({ description: 'An AI draft filled some of its fields' }),
    aiDraftedAt: NullableTimestamp,
    editedFields: Type.Array(Type.Enum(narrativeFields), {
      description: 'Fields a person wrote; an AI draft leaves them alone unless asked to overwrite',
    }),
    publishedAt: NullableTimestamp,
    draftStatus: Type.Union([Type.Enum(['queued', 'running', 'completed', 'failed'] as const), Type.Null()], {
      description: 'The last AI draft asked for; null when none was',
    }),
    draftError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last draft failed' }),
    draftRequestedAt: NullableTimestamp,
    suspectedDeployId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The deploy the last AI draft holds responsible',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Rca' },
)

export const RcaCreate = Type.Object({ title: Title, ...Type.Partial(Type.Object(Narrative)).properties }, { additionalProperties: false })
export const RcaPatch = Type.Object(
  { title: Type.Optional(Title), ...Type.Partial(Type.Object(Narrative)).properties, status: Type.Optional(Type.Enum(rcaStatuses)) },
  { additionalProperties: false, minProperties: 1 },
)
export const RcaQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(Type.Enum(rcaStatuses)),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Words in the title' })),
})

/** What an RCA may link, by what the id names. */
export const linkKinds = ['incident', 'alert', 'status_incident'] as const

export const IncidentLink = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    sourceProduct: Type.Enum(sourceProducts),
    incidentId: Type.String({ format: 'uuid' }),
    linkedBy: NullableId,
    createdAt: Timestamp,
    incident: Type.Union(
      [
        Type.Object({
          kind: Type.Enum(linkKinds, {
            description: 'incident: an incident of alerting (INC-n); alert: one alert; status_incident: a status page incident',
          }),
          reference: Type.String({ description: 'How people name it: INC-n, the alert’s title, the status page incident’s name' }),
          title: Type.String(),
          priority: Type.String({ description: 'An incident’s severity, an alert’s priority, a status page incident’s impact' }),
          status: Type.String(),
          service: Type.Union([Type.String(), Type.Null()]),
          startedAt: Timestamp,
          resolvedAt: NullableTimestamp,
        }),
        Type.Null(),
      ],
      {
        description:
          'What its surface knows of it; null when it is gone, or when the caller may not read it on its surface (alerting viewer for alerts)',
      },
    ),
  },
  { title: 'RcaIncidentLink' },
)
export const LinkCreate = Type.Object(
  {
    sourceProduct: Type.Enum(sourceProducts),
    incidentId: Type.String({
      format: 'uuid',
      description: 'With `alerting`: an incident (INC-n) or an alert; with `statuspages`: a status page incident',
    }),
  },
  { additionalProperties: false },
)

export const ActionItem = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rcaId: Type.String({ format: 'uuid' }),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    assigneeUserId: NullableId,
    status: Type.Enum(actionItemStatuses),
    priority: Type.Enum(actionItemPriorities),
    dueDate: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    createdBy: NullableId,
    completedAt: NullableTimestamp,
    ticket: Type.Union(
      [
        Type.Object(
          {
            trackerId: NullableId,
            syncStatus: Type.Enum(['none', 'pending', 'synced', 'failed'], {
              description:
                'pending: being created (tried again with backoff while the tracker does not answer); failed: given up, see syncError',
            }),
            syncError: Type.Union([Type.String(), Type.Null()]),
            key: Type.Union([Type.String(), Type.Null()], { description: 'e.g. SEC-12, once created' }),
            url: Type.Union([Type.String(), Type.Null()]),
            status: Type.Union([Type.String(), Type.Null()], { description: 'As the tracker names it; its webhook keeps it current' }),
          },
          { title: 'RcaActionItemTicket' },
        ),
        Type.Null(),
      ],
      { description: 'Its ticket in a tracker (Jira, Linear), when it has one; done there makes the item done' },
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'RcaActionItem' },
)
const ItemFields = {
  description: NullableText(10_000),
  assigneeUserId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'A member of the organization' }),
  status: Type.Enum(actionItemStatuses),
  priority: Type.Enum(actionItemPriorities),
  dueDate: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
}
const TRACKER_ID = 'A ticket tracker of the organization (alerting’s …/trackers): the item gets its ticket there, created after the answer'
const TrackerId = Type.String({ format: 'uuid', description: TRACKER_ID })
export const ActionItemCreate = Type.Object(
  { title: Title, ...Type.Partial(Type.Object(ItemFields)).properties, trackerId: Type.Optional(TrackerId) },
  { additionalProperties: false },
)
export const ActionItemPatch = Type.Object(
  {
    title: Type.Optional(Title),
    ...Type.Partial(Type.Object(ItemFields)).properties,
    trackerId: Type.Optional(Type.String({ format: 'uuid', description: `${TRACKER_ID}; 409 when it has one already` })),
  },
  { additionalProperties: false, minProperties: 1 },
)
export const ActionItemQuery = Type.Object({
  status: Type.Optional(Type.Enum(actionItemStatuses)),
  assigneeUserId: Type.Optional(Type.String({ format: 'uuid' })),
})

const iso = (value: Date | null) => value?.toISOString() ?? null

export function rcaBody(row: RcaRow) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    title: row.title,
    status: row.status as RcaStatus,
    summary: row.summary,
    rootCause: row.rootCause,
    impact: row.impact,
    timeline: row.timeline,
    createdBy: row.createdBy,
    aiDrafted: row.aiDraftedAt !== null,
    aiDraftedAt: iso(row.aiDraftedAt),
    editedFields: row.editedFields.filter((field): field is NarrativeField => (narrativeFields as readonly string[]).includes(field)),
    publishedAt: iso(row.publishedAt),
    draftStatus: row.draftStatus as 'queued' | 'running' | 'completed' | 'failed' | null,
    draftError: row.draftError,
    draftRequestedAt: iso(row.draftRequestedAt),
    suspectedDeployId: row.suspectedDeployId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** A link as the caller may see it: the incident itself only when they may read its surface. */
export function linkBody(row: LinkRow, readable: ReadonlySet<string>) {
  return {
    id: row.id,
    sourceProduct: row.sourceProduct as (typeof sourceProducts)[number],
    incidentId: row.incidentId,
    linkedBy: row.linkedBy,
    createdAt: row.createdAt.toISOString(),
    incident:
      row.title === null || row.firstSeenAt === null || !readable.has(row.sourceProduct)
        ? null
        : {
            kind: row.kind,
            reference: row.reference ?? row.title,
            title: row.title,
            priority: row.priority ?? '',
            status: row.status ?? '',
            service: row.service,
            startedAt: row.firstSeenAt.toISOString(),
            resolvedAt: iso(row.resolvedAt),
          },
  }
}

export type ActionItemTicket = Static<typeof ActionItem>['ticket']

export function actionItemBody(row: ActionItemRow, ticket: ActionItemTicket = null) {
  return {
    id: row.id,
    rcaId: row.rcaId,
    title: row.title,
    description: row.description,
    assigneeUserId: row.assigneeUserId,
    status: row.status as (typeof actionItemStatuses)[number],
    priority: row.priority as (typeof actionItemPriorities)[number],
    dueDate: row.dueDate,
    createdBy: row.createdBy,
    completedAt: iso(row.completedAt),
    ticket,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}
