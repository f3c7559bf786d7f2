import { ScimError as PatchLibraryError, scimPatch, type ScimPatchOperation, type ScimResource } from 'scim-patch'
import { ScimError, type ScimType } from './errors.js'
import { checkValue, resolvePath, type ResolvedPath } from './patch-paths.js'
import { isObject, type Json, type JsonObject } from './schema/canonical.js'
import type { SchemaDefinition } from './schema/definitions.js'

// A PATCH is applied to the whole resource in memory by scim-patch (RFC 7644 §3.5.2 paths,
// value filters), and the result is then stored like a PUT. Reading, applying and storing
// happen in one transaction with the row locked, so the operations of one request apply
// together or not at all. Before scim-patch sees an operation, its path (or each key of a
// path-less value) is resolved against the schemas and its value checked (patch-paths.ts),
// and it works on null-prototype copies: no request text can reach Object.prototype.

type Op = 'add' | 'replace' | 'remove'
const OPERATIONS = new Set<string>(['add', 'replace', 'remove'])

/** Common attributes a path-less value may carry and a PUT would ignore (RFC 7644 §3.5.1). */
const IGNORED_IN_VALUES = new Set(['schemas', 'id', 'meta'])

function isReadOnly(target: ResolvedPath): boolean {
  return target.attribute.mutability === 'readOnly' || target.sub?.mutability === 'readOnly'
}

function operation(op: Op, target: ResolvedPath, value: Json | undefined, where: string): ScimPatchOperation {
  if (isReadOnly(target)) throw new ScimError(400, `${where}: ${target.path} is read-only`, 'mutability')
  const applied = checkValue(target, value, where)
  return { op, path: target.path, ...(applied !== undefined ? { value: applied } : {}) } as ScimPatchOperation
}

/**
 * Entra removes group members by listing them (`remove members [{value: id}]`); scim-patch
 * compares whole objects, which never match a member carrying `display` and `$ref`. Such a
 * removal becomes one filtered removal per listed value, which removes by `value` alone.
 */
function removalsByValue(target: ResolvedPath, value: Json | undefined): ScimPatchOperation[] | undefined {
  const listed = isObject(value) ? [value] : value
  if (target.filtered || target.sub || !Array.isArray(listed) || listed.length === 0) return undefined
  const values = listed.map((item) => (isObject(item) ? item.value : undefined))
  if (!values.every((item) => typeof item === 'string')) return undefined
  return values.map((item) => ({ op: 'remove', path: `${target.path}[value eq ${JSON.stringify(item)}]` }))
}

/**
 * A path-less add or replace: each key of the value is a path of its own (`title`,
 * `name.givenName`, `urn:…:enterprise:2.0:User:department`, or the extension's URN holding
 * an object of its attributes), so it is one operation per key, each resolved like a path.
 */
function pathLess(op: Op, value: JsonObject, schemas: SchemaDefinition[], where: string): ScimPatchOperation[] {
  const extensions = new Map(schemas.slice(1).map((schema) => [schema.id.toLowerCase(), schema]))
  return Object.entries(value).flatMap(([key, item]) => {
    if (IGNORED_IN_VALUES.has(key.toLowerCase())) return []
    const extension = extensions.get(key.toLowerCase())
    if (extension) {
      if (!isObject(item)) throw new ScimError(400, `${where}: ${key} takes an object of its attributes`, 'invalidValue')
      return Object.entries(item).map(([name, inner]) =>
        operation(op, resolvePath(`${extension.id}:${name}`, schemas, 'invalidValue'), inner, where),
      )
    }
    return [operation(op, resolvePath(key, schemas, 'invalidValue'), item, where)]
  })
}

/** The operations of a PatchOp body, each with a path spelled from the schemas. */
export function readOperations(body: unknown, schemas: SchemaDefinition[]): ScimPatchOperation[] {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a PatchOp object', 'invalidSyntax')
  const key = Object.keys(body).find((name) => name.toLowerCase() === 'operations')
  const operations = key ? body[key] : undefined
  if (!Array.isArray(operations) || operations.length === 0)
    throw new ScimError(400, 'Operations must be a non-empty list', 'invalidSyntax')
  return operations.flatMap((item, index) => {
    const where = `Operations[${index}]`
    if (!isObject(item) || typeof item.op !== 'string') throw new ScimError(400, `${where} needs an op`, 'invalidSyntax')
    const op = item.op.toLowerCase()
    if (!OPERATIONS.has(op)) throw new ScimError(400, `${where}.op must be add, replace or remove`, 'invalidSyntax')
    const { value } = item
    const pathText = typeof item.path === 'string' && item.path.trim() !== '' ? item.path.trim() : undefined
    if (pathText === undefined) {
      if (op === 'remove') throw new ScimError(400, `${where}: remove needs a path`, 'noTarget')
      if (!isObject(value)) throw new ScimError(400, `${where}: without a path, the value must be an object`, 'invalidValue')
      return pathLess(op as Op, value, schemas, where)
    }
    // A path naming a whole extension (`urn:…:enterprise:2.0:User`) is its attributes, one by one.
    if (op !== 'remove' && schemas.slice(1).some((schema) => schema.id.toLowerCase() === pathText.toLowerCase())) {
      if (!isObject(value)) throw new ScimError(400, `${where}: ${pathText} takes an object of its attributes`, 'invalidValue')
      return pathLess(op as Op, { [pathText]: value }, schemas, where)
    }
    const target = resolvePath(pathText, schemas)
    if (op === 'remove') {
      const removals = removalsByValue(target, value)
      if (removals) return removals
    } else if (value === undefined) {
      throw new ScimError(400, `${where}: ${op} needs a value`, 'invalidValue')
    }
    return [operation(op as Op, target, value, where)]
  })
}

/**
 * The prototype of detached objects: frozen, itself without a prototype, holding only the two
 * methods scim-patch's deep equality (fast-deep-equal) calls. Assigning `__proto__`,
 * `constructor` or anything else to a detached object only ever adds an own key.
 */
const DETACHED_PROTOTYPE = Object.freeze(
  Object.create(null, { valueOf: { value: Object.prototype.valueOf }, toString: { value: Object.prototype.toString } }) as object,
)

/** A deep copy whose objects do not inherit from Object.prototype. */
function detached(value: Json): Json {
  if (Array.isArray(value)) return value.map(detached)
  if (!isObject(value)) return value
  const copy = Object.create(DETACHED_PROTOTYPE) as JsonObject
  for (const [key, item] of Object.entries(value)) copy[key] = detached(item)
  return copy
}

/** Applies the operations to a detached copy of the resource; a failing operation is a 400 and changes nothing. */
export function applyPatch(resource: JsonObject, operations: ScimPatchOperation[]): JsonObject {
  const detachedOperations = operations.map((item) =>
    'value' in item ? { ...item, value: detached(item.value as Json) } : item,
  ) as ScimPatchOperation[]
  try {
    return scimPatch(detached(resource) as unknown as ScimResource, detachedOperations, {
      mutateDocument: true,
      treatMissingAsAdd: true,
    }) as unknown as JsonObject
  } catch (error) {
    if (error instanceof PatchLibraryError) {
      throw new ScimError(400, error.message, (error.scimCode as ScimType | undefined) ?? 'invalidSyntax')
    }
    // scim-patch works on a private copy, so anything else it throws comes from a path it
    // cannot follow: the request's fault.
    throw new ScimError(400, `the operations cannot be applied: ${error instanceof Error ? error.message : String(error)}`, 'invalidPath')
  }
}
