import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Kind } from '../kind.js'
import { Name, NullableText } from './fields.js'

// Custom incident fields and incident types (decision 0031), named by their keys as the API names them.

const Requirement = Type.Enum(['never', 'declare', 'resolve'], { default: 'never' })
const FieldKey = Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$' })

const IncidentField = Type.Object(
  {
    key: FieldKey,
    name: Name,
    description: NullableText(1000),
    kind: Type.Enum(['text', 'number', 'select', 'multi_select', 'user', 'service', 'link'], {
      description: 'Fixed once created: changing it deletes the field and its values, then creates it again',
    }),
    options: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'select and multi_select: their values' }),
    required: Requirement,
  },
  { additionalProperties: false, title: 'IncidentField' },
)
type IncidentField = Static<typeof IncidentField>

/** Custom incident fields, by key. */
export const incidentFields: Kind<IncidentField> = {
  noun: 'incident field',
  file: 'incident-fields.yaml',
  key: 'incidentFields',
  entry: IncidentField,
  whole: ['options'],
  identity: (field) => field.key,
  references: () => [],

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/incident-fields', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the incident fields',
    )
    return rows.map((row) => ({
      id: row.id,
      entry: { key: row.key, name: row.name, description: row.description, kind: row.kind, options: row.options, required: row.required },
    }))
  },

  async create({ connection: { api, orgId } }, field) {
    const { options, ...rest } = field
    await answered(
      api.POST('/api/v1/organizations/{orgId}/incident-fields', {
        params: { path: { orgId } },
        body: { ...rest, ...(options.length > 0 ? { options } : {}) },
      }),
      `creating the incident field ${field.key}`,
    )
  },

  async update(context, live, field) {
    const { api, orgId } = context.connection
    if (live.entry.kind !== field.kind) {
      await incidentFields.remove(context, live)
      await incidentFields.create(context, field)
      return
    }
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/incident-fields/{fieldId}', {
        params: { path: { orgId, fieldId: live.id } },
        body: {
          name: field.name,
          description: field.description,
          required: field.required,
          ...(field.options.length > 0 ? { options: field.options } : {}),
        },
      }),
      `changing the incident field ${field.key}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/incident-fields/{fieldId}', { params: { path: { orgId, fieldId: live.id } } }),
      `deleting the incident field ${live.entry.key}`,
    )
  },
}

const RoleName = Type.String({
  pattern: '^[a-z][a-z0-9_-]{0,39}$',
  description: 'commander, communications, scribe, or one of the organization’s own',
})
const Tasks = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  minItems: 1,
  maxItems: 30,
  description: 'In the order they are worked',
})

const IncidentType = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,39}$' }),
    name: Name,
    description: NullableText(1000),
    fields: Type.Array(Type.Object({ field: FieldKey, required: Requirement }, { additionalProperties: false }), {
      default: [],
      description: 'Custom fields (by key) and when incidents of the type need them',
    }),
    roles: Type.Array(Type.Object({ role: RoleName, tasks: Type.Optional(Tasks) }, { additionalProperties: false }), {
      default: [],
      description: 'The roles its incidents have besides commander, each with its own checklist if given; empty: every role',
    }),
  },
  { additionalProperties: false, title: 'IncidentType' },
)
type IncidentType = Static<typeof IncidentType>

/** Incident types, by key, with the fields each requires. */
export const incidentTypes: Kind<IncidentType> = {
  noun: 'incident type',
  file: 'incident-types.yaml',
  key: 'incidentTypes',
  entry: IncidentType,
  whole: ['fields', 'roles'],
  identity: (type) => type.key,
  references: () => [],

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/incident-types', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the incident types',
    )
    return rows.map((row) => ({
      id: row.id,
      entry: { key: row.key, name: row.name, description: row.description, fields: row.fields, roles: row.roles },
    }))
  },

  async create({ connection: { api, orgId } }, type) {
    await answered(
      api.POST('/api/v1/organizations/{orgId}/incident-types', { params: { path: { orgId } }, body: type }),
      `creating the incident type ${type.key}`,
    )
  },

  async update({ connection: { api, orgId } }, live, type) {
    const { key: _key, ...change } = type
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/incident-types/{typeId}', { params: { path: { orgId, typeId: live.id } }, body: change }),
      `changing the incident type ${type.key}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/incident-types/{typeId}', { params: { path: { orgId, typeId: live.id } } }),
      `deleting the incident type ${live.entry.key}`,
    )
  },
}

const Checklist = Type.Object({ role: RoleName, tasks: Tasks }, { additionalProperties: false, title: 'IncidentChecklist' })
type Checklist = Static<typeof Checklist>

/** The organization's checklist of each incident role, by role. */
export const incidentChecklists: Kind<Checklist> = {
  noun: 'incident checklist',
  file: 'incident-checklists.yaml',
  key: 'incidentChecklists',
  entry: Checklist,
  whole: ['tasks'],
  identity: (checklist) => checklist.role,
  references: () => [],

  async live({ connection: { api, orgId } }) {
    const { data } = await answered(
      api.GET('/api/v1/organizations/{orgId}/incident-checklists', { params: { path: { orgId } } }),
      'reading the incident checklists',
    )
    return data.map((row) => ({ id: row.role, entry: { role: row.role, tasks: row.tasks } }))
  },

  async create(context, checklist) {
    await this.update(context, { id: checklist.role, entry: checklist }, checklist)
  },

  async update({ connection: { api, orgId } }, _live, checklist) {
    await answered(
      api.PUT('/api/v1/organizations/{orgId}/incident-checklists/{role}', {
        params: { path: { orgId, role: checklist.role } },
        body: { tasks: checklist.tasks },
      }),
      `setting the ${checklist.role} checklist`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/incident-checklists/{role}', { params: { path: { orgId, role: live.id } } }),
      `removing the ${live.entry.role} checklist`,
    )
  },
}
