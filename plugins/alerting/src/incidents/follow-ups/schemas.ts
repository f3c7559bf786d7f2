import { Type } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'

export const FollowUpParams = Type.Object({ orgId: Type.String(), incidentId: Type.String(), followUpId: Type.String() })

export const FollowUp = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    incidentId: Type.String({ format: 'uuid' }),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: Type.Enum(['open', 'done'] as const, { description: 'done when its ticket is done in the tracker, or set by hand' }),
    trackerId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    syncStatus: Type.Enum(['none', 'pending', 'synced', 'failed'] as const, {
      description:
        'none: no tracker; pending: the ticket is being created (tried again with backoff); synced; failed: given up, see syncError',
    }),
    syncError: Type.Union([Type.String(), Type.Null()], {
      description: 'What the tracker last answered when it did not create the ticket',
    }),
    ticket: Type.Union(
      [
        Type.Object({ id: Type.String(), key: Type.String(), url: Type.String(), status: Type.Union([Type.String(), Type.Null()]) }),
        Type.Null(),
      ],
      { description: 'The ticket in the tracker, once created; its status as the tracker last said' },
    ),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'IncidentFollowUp' },
)

export const CreateFollowUp = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
    description: Type.Optional(NullableString({ maxLength: 10_000 })),
    trackerId: Type.Optional(Type.String({ format: 'uuid', description: 'A tracker of the organization: a ticket is created there' })),
  },
  { additionalProperties: false },
)

export const UpdateFollowUp = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' })),
    description: Type.Optional(NullableString({ maxLength: 10_000 })),
    status: Type.Optional(Type.Enum(['open', 'done'] as const)),
  },
  { additionalProperties: false, minProperties: 1 },
)
