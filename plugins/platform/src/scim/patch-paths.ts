import { ScimError, type ScimType } from './errors.js'
import { parseFilter, type Filter } from './filter/parse.js'
import { isObject, type Json } from './schema/canonical.js'
import type { AttributeDefinition, SchemaDefinition } from './schema/definitions.js'

// Every PATCH path, and every key of a path-less value, is resolved against the resource's
// schemas before anything is applied. scim-patch walks whatever keys it is given
// (`__proto__.x` wrote onto Object.prototype for the whole process: GHSA-9m6g-wc8r-q59c,
// GHSA-2mhw-wcx5-v3xj, unfixed in its newest release), so it only ever sees paths spelled
// here from schema names, never text taken from the request.

/** Common attributes (RFC 7643 §3.1) that the schemas do not list. */
const COMMON_ATTRIBUTES: AttributeDefinition[] = [
  {
    name: 'externalId',
    type: 'string',
    multiValued: false,
    description: '',
    required: false,
    caseExact: true,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
  },
  {
    name: 'id',
    type: 'string',
    multiValued: false,
    description: '',
    required: false,
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  },
  {
    name: 'meta',
    type: 'complex',
    multiValued: false,
    description: '',
    required: false,
    caseExact: false,
    mutability: 'readOnly',
    returned: 'default',
    uniqueness: 'none',
  },
  {
    name: 'schemas',
    type: 'string',
    multiValued: true,
    description: '',
    required: false,
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'none',
  },
]

/**
 * Names providers send for a sub-attribute under another spelling: Azure's own reference
 * collection labels a group member `displayName`, not `display`.
 */
const SUB_ATTRIBUTE_ALIASES = new Map([['members', new Set(['displayname'])]])

/** A path resolved against the schemas: what scim-patch is given, and what it targets. */
export interface ResolvedPath {
  /** The path in the schemas' spelling, built from their names. */
  path: string
  attribute: AttributeDefinition
  /** The sub-attribute after the dot, when there is one. */
  sub?: AttributeDefinition
  /** The path selects elements of a multi-valued attribute by a filter. */
  filtered: boolean
}

/** Raised for paths, and (as `invalidValue`) for the keys of path-less values. */
function refuse(detail: string, scimType: ScimType): never {
  throw new ScimError(400, detail, scimType)
}

function named(definitions: AttributeDefinition[], name: string): AttributeDefinition | undefined {
  const lower = name.toLowerCase()
  return definitions.find((definition) => definition.name.toLowerCase() === lower)
}

/** The schema a path's URN names (`urn:…:enterprise:2.0:User:department`), with the rest of the path. */
function splitUrn(text: string, schemas: SchemaDefinition[]): { schema: SchemaDefinition; rest: string; prefixed: boolean } | undefined {
  const lower = text.toLowerCase()
  if (!lower.startsWith('urn:')) return { schema: schemas[0] as SchemaDefinition, rest: text, prefixed: false }
  const schema = schemas.find((candidate) => lower.startsWith(`${candidate.id.toLowerCase()}:`))
  return schema && { schema, rest: text.slice(schema.id.length + 1), prefixed: true }
}

/** The attribute names a value filter compares: each must be a sub-attribute of the filtered one. */
function checkFilter(filter: Filter, attribute: AttributeDefinition, text: string, scimType: ScimType): void {
  switch (filter.kind) {
    case 'and':
    case 'or':
      checkFilter(filter.left, attribute, text, scimType)
      checkFilter(filter.right, attribute, text, scimType)
      return
    case 'not':
      checkFilter(filter.filter, attribute, text, scimType)
      return
    case 'element':
      return refuse(`${text}: a value filter cannot hold another`, scimType)
    default:
      if (filter.path.schema || filter.path.sub || !named(attribute.subAttributes ?? [], filter.path.name)) {
        refuse(`${text}: ${attribute.name} has no sub-attribute ${filter.path.name}`, scimType)
      }
  }
}

const NAME = /^[A-Za-z][\w-]*$/

/**
 * Resolves `attribute`, `attribute.sub`, `attribute[filter]`, `attribute[filter].sub`, each
 * optionally behind a schema URN, against the resource's schemas (the first is the core one).
 * Anything else, prototype names included, is refused with `scimType`.
 */
export function resolvePath(text: string, schemas: SchemaDefinition[], scimType: ScimType = 'invalidPath'): ResolvedPath {
  const located = splitUrn(text.trim(), schemas)
  if (!located) refuse(`${text}: the schema is not one of this resource's`, scimType)
  const { schema, rest, prefixed } = located
  const match = /^(?<name>[^.[\]]+)(?:\[(?<filter>.*)\])?(?:\.(?<sub>[^.[\]]+))?$/s.exec(rest)
  const { name = '', filter, sub: subName } = match?.groups ?? {}
  if (!NAME.test(name) || (subName !== undefined && !NAME.test(subName))) refuse(`${text} is not an attribute path`, scimType)
  const core = schema === schemas[0]
  const attribute = named(schema.attributes, name) ?? (core ? named(COMMON_ATTRIBUTES, name) : undefined)
  if (!attribute) refuse(`${text}: ${schema.name} has no attribute ${name}`, scimType)
  if (filter !== undefined) {
    if (attribute.type !== 'complex' || !attribute.multiValued)
      refuse(`${text}: only a multi-valued complex attribute takes a filter`, scimType)
    let parsed: Filter
    try {
      parsed = parseFilter(filter)
    } catch {
      refuse(`${text}: the filter cannot be read`, scimType)
    }
    checkFilter(parsed, attribute, text, scimType)
  }
  const sub = subName === undefined ? undefined : named(attribute.subAttributes ?? [], subName)
  if (subName !== undefined && !sub) refuse(`${text}: ${attribute.name} has no sub-attribute ${subName}`, scimType)
  const spelled = `${prefixed && !core ? `${schema.id}:` : ''}${attribute.name}${filter === undefined ? '' : `[${filter}]`}${sub ? `.${sub.name}` : ''}`
  return { path: spelled, attribute, ...(sub ? { sub } : {}), filtered: filter !== undefined }
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value)
}

/** One element of a complex attribute: an object of its sub-attributes, or a bare id where it has `value`. */
function checkComplexItem(attribute: AttributeDefinition, item: unknown, where: string): void {
  if (typeof item === 'string' && named(attribute.subAttributes ?? [], 'value')) return
  if (!isObject(item)) refuse(`${where}: ${attribute.name} takes objects of its sub-attributes`, 'invalidValue')
  const aliases = SUB_ATTRIBUTE_ALIASES.get(attribute.name)
  for (const [key, value] of Object.entries(item)) {
    if (!named(attribute.subAttributes ?? [], key) && !aliases?.has(key.toLowerCase())) {
      refuse(`${where}: ${attribute.name} has no sub-attribute ${key}`, 'invalidValue')
    }
    if (!isScalar(value)) refuse(`${where}: ${attribute.name}.${key} must be a single value`, 'invalidValue')
  }
}

/**
 * A value for a resolved path: scalars for simple attributes and sub-attributes, objects of
 * known sub-attributes for complex ones (a list of them for a multi-valued one). Nothing else
 * reaches scim-patch, so no key of a value names anything the schemas do not. Answers the value
 * to apply: a one-element list for a single-valued complex attribute is its element (some
 * Microsoft Entra tenants send the enterprise manager as `[{"$ref":null,"value":"…"}]`), and a
 * bare id is `{"value": id}`.
 */
export function checkValue(target: ResolvedPath, value: Json | undefined, where: string): Json | undefined {
  if (value === undefined) return value
  const { attribute, sub, filtered } = target
  if (sub || attribute.type !== 'complex') {
    const definition = sub ?? attribute
    const items = definition.multiValued && !sub && Array.isArray(value) ? value : [value]
    if (!items.every(isScalar)) refuse(`${where}: ${definition.name} takes a single value, not an object or a list`, 'invalidValue')
    return value
  }
  if (!attribute.multiValued && Array.isArray(value) && value.length === 1) return checkValue(target, value[0], where)
  const list = attribute.multiValued && !filtered && Array.isArray(value)
  const items = list ? value : [value]
  for (const item of items) checkComplexItem(attribute, item, where)
  // A bare id is the item's `value` (Entra sends `"manager": "<id>"`): applied as `{value}`, so it
  // replaces or merges with what is there as the object form would, instead of a string that
  // scim-patch cannot merge into an object (400 "Invalid SCIM Patch").
  const asItem = (item: Json) => (typeof item === 'string' ? { value: item } : item)
  return list ? (value as Json[]).map(asItem) : asItem(value)
}
