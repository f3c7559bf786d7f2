import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { activeMembersAmong, serviceIdsByKey } from '../../oncall/index.js'
import { fieldsByKey, findTypeByKey, storedTypeFields, type FieldDefinition } from './queries.js'
import type { FieldValues, Requirement, TypeField } from './schemas.js'

// What an incident's custom field values must hold (decision 0031): each value is of its field's
// kind, and what its type (or the field itself) requires is there when the incident is declared
// or resolved.

/** The organization's fields and the incident's type: what its values are checked against. */
export interface Shape {
  fields: Map<string, FieldDefinition>
  type: { id: string; key: string; name: string; fields: TypeField[] } | null
}

/**
 * A field's value in values keyed by field keys, own properties only: a field may be keyed
 * `constructor` or `valueOf`, which every plain object answers to.
 */
export const fieldValue = (values: Record<string, unknown>, key: string): unknown => (Object.hasOwn(values, key) ? values[key] : undefined)

/** The shape of an incident of the type keyed `typeKey` (none: no type); 400 naming `field` for an unknown type. */
export async function shapeOf(db: Executor, organizationId: string, typeKey: string | null, field = 'type'): Promise<Shape> {
  const fields = await fieldsByKey(db, organizationId)
  if (typeKey === null) return { fields, type: null }
  const type = await findTypeByKey(db, organizationId, typeKey)
  if (!type) throw invalidField(field, `is not an incident type of the organization (${typeKey})`)
  return { fields, type: { id: type.id, key: type.key, name: type.name, fields: storedTypeFields(type.fields) } }
}

/** When an incident of the shape's type needs the field: the type's word for it, else the field's own. */
export function requirementOf(shape: Shape, field: FieldDefinition): Requirement {
  return shape.type?.fields.find((entry) => entry.field === field.key)?.required ?? field.required
}

const isUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

/** Why a value does not fit its field's kind (undefined when it fits); users and services are checked against the database after. */
function misfit(field: FieldDefinition, value: FieldValues[string]): string | undefined {
  if (value === null) return undefined
  const options = () => `one of ${field.options.map((option) => `"${option}"`).join(', ')}`
  switch (field.kind) {
    case 'text':
      return typeof value === 'string' && value.trim() !== '' && value.length <= 2_000
        ? undefined
        : 'must be a text that is not blank, up to 2,000 characters'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number'
    case 'select':
      return typeof value === 'string' && field.options.includes(value) ? undefined : `must be ${options()}`
    case 'multi_select':
      return Array.isArray(value) &&
        value.every((entry) => typeof entry === 'string' && field.options.includes(entry)) &&
        new Set(value).size === value.length
        ? undefined
        : `must be a list of ${options()}, each once`
    case 'user':
      return typeof value === 'string' && isUuid(value) ? undefined : 'must be the id of a member of the organization'
    case 'service':
      return typeof value === 'string' && value.trim() !== '' ? undefined : 'must be the key of a service of the catalog'
    case 'link':
      return typeof value === 'string' && value.length <= 2_000 && isUrl(value) ? undefined : 'must be an http or https URL'
  }
}

/**
 * Checks values given for an incident's fields (400 naming the first that is wrong): each names a
 * field of the organization and fits its kind; a user is an active member, a service a key of the
 * catalog. Answers them as they are stored: as given, a service key lower-cased (the catalog's own form).
 */
export async function checkFieldValues(db: Executor, organizationId: string, shape: Shape, values: FieldValues): Promise<FieldValues> {
  const checked: FieldValues = {}
  const users: Array<[string, string]> = []
  const services: Array<[string, string]> = []
  for (const [key, value] of Object.entries(values)) {
    const field = shape.fields.get(key)
    if (!field) throw invalidField(`fields/${key}`, 'is not a custom field of the organization')
    const wrong = misfit(field, value)
    if (wrong) throw invalidField(`fields/${key}`, `(${field.kind}) ${wrong}`)
    if (value !== null && field.kind === 'user') users.push([key, value as string])
    if (value !== null && field.kind === 'service') services.push([key, (value as string).trim().toLowerCase()])
    checked[key] = value
  }
  if (users.length > 0) {
    const members = await activeMembersAmong(
      db,
      organizationId,
      users.map(([, id]) => id),
    )
    for (const [key, id] of users) if (!members.has(id)) throw invalidField(`fields/${key}`, 'is not an active member of the organization')
  }
  if (services.length > 0) {
    const known = await serviceIdsByKey(
      db,
      organizationId,
      services.map(([, name]) => name),
    )
    for (const [key, name] of services) {
      if (!known.has(name)) throw invalidField(`fields/${key}`, `is not the key of a service of the catalog (${name})`)
      checked[key] = name
    }
  }
  return checked
}

const isSet = (value: unknown) => value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)

/**
 * Refuses (400) an incident that lacks a field it needs at this moment: at declaration those
 * required to declare, at resolution those required to declare or to resolve. The message names
 * every missing field, the first in its path.
 */
export function requireFields(shape: Shape, values: Record<string, unknown>, moment: 'declare' | 'resolve') {
  const needed = new Set<Requirement>(moment === 'declare' ? ['declare'] : ['declare', 'resolve'])
  const missing = [...shape.fields.values()].filter(
    (field) => needed.has(requirementOf(shape, field)) && !isSet(fieldValue(values, field.key)),
  )
  if (missing.length === 0) return
  const what = shape.type ? `a ${shape.type.name} incident` : 'an incident'
  const names = missing.map((field) => `"${field.name}" (${field.key})`).join(', ')
  throw invalidField(`fields/${missing[0]!.key}`, `is required to ${moment} ${what}: set ${names}`)
}
