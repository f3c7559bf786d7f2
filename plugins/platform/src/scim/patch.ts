import { ScimError as PatchLibraryError, scimPatch, type ScimPatchOperation, type ScimResource } from 'scim-patch'
import { ScimError, type ScimType } from './errors.js'
import { isObject, type JsonObject } from './schema/canonical.js'
import type { SchemaDefinition } from './schema/definitions.js'

// A PATCH is applied to the whole resource in memory by scim-patch (RFC 7644 §3.5.2 paths,
// value filters, path-less values with dotted and URN keys), and the result is then stored like
// a PUT. Reading, applying and storing happen in one transaction with the row locked, so the
// operations of one request apply together or not at all.

const OPERATIONS = new Set(['add', 'replace', 'remove'])

/** `Members`, `name.GivenName`: the attribute names of a path in the schema's spelling. */
function canonicalPath(path: string, schemas: SchemaDefinition[]): string {
  const match = /^(?<urn>urn:[^[\]]*:)?(?<name>[A-Za-z$][\w$-]*)(?<rest>.*)$/i.exec(path)
  if (!match?.groups) return path
  const { urn = '', name = '', rest = '' } = match.groups
  const schema = urn ? schemas.find((candidate) => `${candidate.id}:`.toLowerCase() === urn.toLowerCase()) : schemas[0]
  const definition = schema?.attributes.find((attribute) => attribute.name.toLowerCase() === name.toLowerCase())
  if (!definition) return path
  const prefix = urn && schema ? `${schema.id}:` : urn
  const { filter = '', sub: subName } = /^(?<filter>\[.*\])?\.(?<sub>[A-Za-z$][\w$-]*)$/.exec(rest)?.groups ?? {}
  const sub = subName === undefined ? undefined : definition.subAttributes?.find((attribute) => attribute.name.toLowerCase() === subName.toLowerCase())
  const canonicalRest = sub ? `${filter}.${sub.name}` : rest
  return `${prefix}${definition.name}${canonicalRest}`
}

/**
 * Entra removes group members by listing them (`remove members [{value: id}]`); scim-patch
 * compares whole objects, which never match a member carrying `display` and `$ref`. Such a
 * removal becomes one filtered removal per listed value, which removes by `value` alone.
 */
function removalsByValue(path: string, value: unknown): ScimPatchOperation[] | undefined {
  if (path.includes('[') || !Array.isArray(value) || value.length === 0) return undefined
  const values = value.map((item) => (isObject(item) ? item.value : undefined))
  if (!values.every((item) => typeof item === 'string')) return undefined
  return values.map((item) => ({ op: 'remove', path: `${path}[value eq ${JSON.stringify(item)}]` }))
}

/** The operations of a PatchOp body, with `op` in lower case and paths in canonical spelling. */
export function readOperations(body: unknown, schemas: SchemaDefinition[]): ScimPatchOperation[] {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a PatchOp object', 'invalidSyntax')
  const key = Object.keys(body).find((name) => name.toLowerCase() === 'operations')
  const operations = key ? body[key] : undefined
  if (!Array.isArray(operations) || operations.length === 0) throw new ScimError(400, 'Operations must be a non-empty list', 'invalidSyntax')
  return operations.flatMap((operation, index) => {
    if (!isObject(operation) || typeof operation.op !== 'string') throw new ScimError(400, `Operations[${index}] needs an op`, 'invalidSyntax')
    const op = operation.op.toLowerCase()
    if (!OPERATIONS.has(op)) throw new ScimError(400, `Operations[${index}].op must be add, replace or remove`, 'invalidSyntax')
    const path = typeof operation.path === 'string' && operation.path.trim() !== '' ? canonicalPath(operation.path.trim(), schemas) : undefined
    if (op === 'remove' && path === undefined) throw new ScimError(400, `Operations[${index}]: remove needs a path`, 'noTarget')
    const removals = op === 'remove' && path !== undefined ? removalsByValue(path, operation.value) : undefined
    if (removals) return removals
    if (op !== 'remove' && path === undefined && !isObject(operation.value)) {
      throw new ScimError(400, `Operations[${index}]: without a path, the value must be an object`, 'invalidValue')
    }
    return [{ op, ...(path !== undefined ? { path } : {}), ...(operation.value !== undefined ? { value: operation.value } : {}) } as ScimPatchOperation]
  })
}

/** Applies the operations to a copy of the resource; a failing operation is a 400 and changes nothing. */
export function applyPatch(resource: JsonObject, operations: ScimPatchOperation[]): JsonObject {
  try {
    return scimPatch(structuredClone(resource) as unknown as ScimResource, operations, { mutateDocument: true, treatMissingAsAdd: true }) as unknown as JsonObject
  } catch (error) {
    if (error instanceof PatchLibraryError) {
      throw new ScimError(400, error.message, (error.scimCode as ScimType | undefined) ?? 'invalidSyntax')
    }
    // scim-patch works on a private copy, so anything else it throws comes from a path it
    // cannot follow (`name[givenName eq "A"].x` is a TypeError inside it): the request's fault.
    throw new ScimError(400, `the operations cannot be applied: ${error instanceof Error ? error.message : String(error)}`, 'invalidPath')
  }
}
