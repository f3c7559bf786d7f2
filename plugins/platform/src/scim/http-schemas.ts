import { Type, type TSchema } from 'typebox'
import type { JsonObject } from './schema/canonical.js'

// Route schemas of the SCIM endpoints. SCIM attribute names are case-insensitive and identity
// providers send booleans as strings, so bodies are described here for the reference and read
// by the resource readers (readUser, readGroup, readOperations), which answer SCIM errors.

export const ScimErrorResponse = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    status: Type.String({ description: 'The HTTP status, as a string' }),
    detail: Type.String(),
    scimType: Type.Optional(Type.String()),
  },
  { title: 'ScimError' },
)

export const scimErrors = { '4xx': ScimErrorResponse, '5xx': ScimErrorResponse }

const Meta = Type.Object({
  resourceType: Type.String(),
  created: Type.Optional(Type.String({ format: 'date-time' })),
  lastModified: Type.Optional(Type.String({ format: 'date-time' })),
  location: Type.String(),
  version: Type.Optional(Type.String()),
})

const MultiValue = Type.Object(
  {
    value: Type.Optional(Type.String()),
    display: Type.Optional(Type.String()),
    type: Type.Optional(Type.String()),
    primary: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
)

export const ScimUser = Type.Unsafe<JsonObject>(
  Type.Object(
    {
      schemas: Type.Array(Type.String()),
      id: Type.String(),
      externalId: Type.Optional(Type.String()),
      userName: Type.Optional(Type.String()),
      name: Type.Optional(Type.Object({}, { additionalProperties: true })),
      displayName: Type.Optional(Type.String()),
      active: Type.Optional(Type.Boolean()),
      emails: Type.Optional(Type.Array(MultiValue)),
      groups: Type.Optional(Type.Array(MultiValue)),
      meta: Type.Optional(Meta),
    },
    { additionalProperties: true, title: 'ScimUser', description: 'RFC 7643 §4.1, with the enterprise extension under its URN' },
  ),
)

export const ScimGroup = Type.Unsafe<JsonObject>(
  Type.Object(
    {
      schemas: Type.Array(Type.String()),
      id: Type.String(),
      externalId: Type.Optional(Type.String()),
      displayName: Type.Optional(Type.String()),
      members: Type.Optional(Type.Array(MultiValue)),
      meta: Type.Optional(Meta),
    },
    { additionalProperties: true, title: 'ScimGroup', description: 'RFC 7643 §4.2' },
  ),
)

export const ResourceBody = Type.Object({ schemas: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: true })

export const PatchBody = Type.Object(
  {
    schemas: Type.Optional(Type.Array(Type.String())),
    Operations: Type.Optional(
      Type.Array(
        Type.Object(
          { op: Type.String(), path: Type.Optional(Type.String()), value: Type.Optional(Type.Unknown()) },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true, title: 'PatchOp' },
)

export const ListQuery = Type.Object({
  filter: Type.Optional(Type.String({ description: 'RFC 7644 §3.4.2.2, e.g. userName eq "ada@example.com"' })),
  startIndex: Type.Optional(Type.Integer({ description: '1-based; values below 1 count as 1' })),
  count: Type.Optional(Type.Integer({ description: 'Page size, at most 1000; 0 answers only totalResults' })),
  attributes: Type.Optional(Type.String()),
  excludedAttributes: Type.Optional(Type.String()),
})

export const ReadQuery = Type.Object({ attributes: Type.Optional(Type.String()), excludedAttributes: Type.Optional(Type.String()) })

export const IdParams = Type.Object({ id: Type.String() })

/** A discovery document (ServiceProviderConfig, Schema, ResourceType). */
export const ScimDocument = Type.Unsafe<JsonObject>(Type.Object({ schemas: Type.Array(Type.String()) }, { additionalProperties: true }))

export function ListResponse<T extends TSchema>(resource: T) {
  return Type.Object({
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    itemsPerPage: Type.Integer(),
    startIndex: Type.Integer(),
    Resources: Type.Array(resource),
  })
}
