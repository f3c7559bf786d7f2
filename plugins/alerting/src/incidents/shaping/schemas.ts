import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'
import { ROLE_PATTERN } from '../model.js'

// Custom fields and incident types (decision 0031): what an organization adds to its incidents.

export const FIELD_KINDS = ['text', 'number', 'select', 'multi_select', 'user', 'service', 'link'] as const
export type FieldKind = (typeof FIELD_KINDS)[number]
export const REQUIREMENTS = ['never', 'declare', 'resolve'] as const
export type Requirement = (typeof REQUIREMENTS)[number]

export const FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$'
const FieldKey = Type.String({ pattern: FIELD_KEY_PATTERN, description: 'How the API names the field: lower-case, digits and `_`' })
const TypeKey = Type.String({
  pattern: '^[a-z][a-z0-9_-]{0,39}$',
  description: 'How the API names the type: lower-case, digits, `_` and `-`',
})
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Description = NullableString({ maxLength: 1_000 })
const Requirement = Type.Enum(REQUIREMENTS, {
  description: 'declare: an incident is declared with it; resolve: it is set before the incident is resolved; never: optional',
})
const Options = Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: 'The values a select or multi_select field takes (required for those, refused for the others)',
})

export const FieldParams = Type.Object({ orgId: Type.String(), fieldId: Type.String() })
export const TypeParams = Type.Object({ orgId: Type.String(), typeId: Type.String() })

export const IncidentField = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    key: Type.String(),
    name: Type.String(),
    description: Description,
    kind: Type.Enum(FIELD_KINDS),
    options: Type.Array(Type.String()),
    required: Requirement,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'IncidentField' },
)

export const CreateIncidentField = Type.Object(
  {
    key: FieldKey,
    name: Name,
    description: Type.Optional(Description),
    kind: Type.Enum(FIELD_KINDS, {
      description:
        'text (up to 2,000 characters), number, select (one of `options`), multi_select (several), user (a member’s id), service (a catalog key), link (an http(s) URL)',
    }),
    options: Type.Optional(Options),
    required: Type.Optional(
      Type.Enum(REQUIREMENTS, { default: 'never', description: 'For every incident; a type may ask more of its own' }),
    ),
  },
  { additionalProperties: false },
)
export type CreateIncidentField = Static<typeof CreateIncidentField>

/** The key and kind stay: incidents keep their values under the key, shaped by the kind. */
export const UpdateIncidentField = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    options: Type.Optional(Options),
    required: Type.Optional(Requirement),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateIncidentField = Static<typeof UpdateIncidentField>

export const TypeField = Type.Object(
  { field: FieldKey, required: Requirement },
  { additionalProperties: false, title: 'IncidentTypeField', description: 'A field and when incidents of the type need it' },
)
export type TypeField = Static<typeof TypeField>
const TypeFields = Type.Array(TypeField, {
  maxItems: 50,
  description: 'Overrides the fields’ own `required` for incidents of the type; a field not listed keeps its own',
})

export const TypeRole = Type.Object(
  {
    role: Type.String({ pattern: ROLE_PATTERN, description: 'commander, communications, scribe, or a role of the organization’s own' }),
    tasks: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), {
        minItems: 1,
        maxItems: 30,
        uniqueItems: true,
        description: 'Its checklist on incidents of the type; unset: the organization’s checklist of the role',
      }),
    ),
  },
  { additionalProperties: false, title: 'IncidentTypeRole' },
)
export type TypeRole = Static<typeof TypeRole>
const TypeRoles = Type.Array(TypeRole, {
  maxItems: 20,
  description:
    'The roles its incidents have besides commander, each with its checklist if given; assigning another is refused. Empty: every role, with the organization’s checklists',
})

export const IncidentType = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    key: Type.String(),
    name: Type.String(),
    description: Description,
    fields: Type.Array(TypeField),
    roles: Type.Array(TypeRole),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'IncidentType' },
)

export const CreateIncidentType = Type.Object(
  { key: TypeKey, name: Name, description: Type.Optional(Description), fields: Type.Optional(TypeFields), roles: Type.Optional(TypeRoles) },
  { additionalProperties: false },
)
export type CreateIncidentType = Static<typeof CreateIncidentType>

export const UpdateIncidentType = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    fields: Type.Optional(TypeFields),
    roles: Type.Optional(TypeRoles),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateIncidentType = Static<typeof UpdateIncidentType>

/**
 * One field's value on an incident; null clears it. Its kind says its shape (a text, a number, a
 * list of texts), checked by the field's kind (values.ts): a union here would let the request
 * validator's type coercion turn `12` into `"12"` and `["eu"]` into `"eu"` before the kind is known.
 */
export const FieldValue = Type.Unknown({
  title: 'IncidentFieldValue',
  description:
    'text, link, user (a member’s id), service (a catalog key) and select: a string; number: a number; multi_select: a list of strings; null clears it',
})
export const FieldValues = Type.Record(Type.String({ pattern: FIELD_KEY_PATTERN }), FieldValue, {
  maxProperties: 100,
  additionalProperties: false,
  description: 'Custom field values by the field’s key (null clears one)',
})
export type FieldValues = Static<typeof FieldValues>
