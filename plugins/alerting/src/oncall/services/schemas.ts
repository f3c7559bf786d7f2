import { Type, type Static } from 'typebox'
import { NullableString, PaginationQuery, Timestamp } from '@svc/http'

const KEY_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$'
const Key = Type.String({
  pattern: KEY_PATTERN,
  description: 'A stable slug the organization names the service by (letters, digits, `.`, `_`, `-`; kept lower-case), unique in it',
})
/** Any name an alert's `service` may carry (free text up to 200 characters), not only a slug: `Storefront UI` is an alias as alerts send it. */
const Alias = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description: 'Another name alerts give the service, as they carry it (kept lower-case)',
})
const Url = Type.String({ maxLength: 2000, pattern: '^https?://\\S+$' })
const NullableUuid = Type.Union([Type.String({ format: 'uuid' }), Type.Null()])

export const ServiceLinks = Type.Object(
  {
    runbook: Type.Optional(Url),
    dashboard: Type.Optional(Url),
    repository: Type.Optional(Url),
    chat: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The team’s chat channel, e.g. #checkout' })),
  },
  { additionalProperties: false, title: 'ServiceLinks' },
)

const editable = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  description: NullableString({ maxLength: 2000 }),
  ownerTeamId: Type.Union([NullableUuid], { description: 'The team that owns it' }),
  escalationPolicyId: Type.Union([NullableUuid], {
    description: 'Whom its alerts page when their webhook config names no escalation policy and no routing rule matched',
  }),
  tier: Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.Null()], { description: '1: most critical … 4: least' }),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '\\S' }), { maxItems: 20, uniqueItems: true }),
  links: ServiceLinks,
  aliases: Type.Array(Alias, { maxItems: 20, uniqueItems: true }),
  dependsOn: Type.Array(Key, {
    maxItems: 50,
    uniqueItems: true,
    description: 'The keys of the services it depends on: correlation, the deploy rule and the investigator follow these edges',
  }),
}

const ServiceFields = Type.Object({ key: Key, ...editable })

/** A new service: its key, and any other field. */
export const CreateService = Type.Object({ key: Key, ...Type.Partial(Type.Object(editable)).properties }, { additionalProperties: false })
export type CreateService = Static<typeof CreateService>

/** A change names at least one field. */
export const UpdateService = Type.Partial(ServiceFields, { additionalProperties: false, minProperties: 1 })
export type UpdateService = Static<typeof UpdateService>

export const Service = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    key: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    ownerTeamId: NullableUuid,
    escalationPolicyId: NullableUuid,
    tier: Type.Union([Type.Integer(), Type.Null()]),
    tags: Type.Array(Type.String()),
    links: ServiceLinks,
    aliases: Type.Array(Type.String()),
    dependsOn: Type.Array(Type.String(), { description: 'The keys of the services it depends on' }),
    createdBy: NullableUuid,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Service' },
)

/** One service as its own GET answers: with what shows it on the status pages and in synthetics. */
export const ServiceWithShowings = Type.Object(
  {
    ...Service.properties,
    statusComponents: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        name: Type.String(),
        pageId: Type.String({ format: 'uuid' }),
        pageSlug: Type.String(),
      }),
      { description: 'Components following any of its names (their `alertServices`): those its incidents propose to update' },
    ),
    checks: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), {
      description: 'Synthetic checks that belong to it (their `service`): their failures are its alerts',
    }),
  },
  { title: 'ServiceWithShowings' },
)

export const ServiceParams = Type.Object({ orgId: Type.String(), serviceId: Type.String() })
export const ServiceQuery = Type.Object({
  ...PaginationQuery.properties,
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Part of a key, name or alias' })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Services carrying this tag' })),
})

export const UnregisteredService = Type.Object(
  {
    name: Type.String({ description: 'The `service` alerts carried, as they carried it' }),
    alerts: Type.Integer({ description: 'Alerts that carried it in the last 30 days' }),
    lastSeenAt: Timestamp,
  },
  { title: 'UnregisteredService' },
)
