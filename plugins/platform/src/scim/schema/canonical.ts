import type { AttributeDefinition, SchemaDefinition } from './definitions.js'

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function byLowerName(attributes: AttributeDefinition[]): Map<string, AttributeDefinition> {
  return new Map(attributes.map((definition) => [definition.name.toLowerCase(), definition]))
}

/** Providers send booleans as strings ("True", "False"); anything else is left for validation. */
function booleanOf(value: Json): Json {
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  return value
}

function canonicalValue(definition: AttributeDefinition, value: Json): Json | undefined {
  if (value === null) return undefined
  if (definition.multiValued) {
    const items = (Array.isArray(value) ? value : [value])
      .map((item) => canonicalSingle(definition, item))
      .filter((item): item is Json => item !== undefined && !(isObject(item) && Object.keys(item).length === 0))
    return items
  }
  return canonicalSingle(definition, value)
}

function canonicalSingle(definition: AttributeDefinition, value: Json): Json | undefined {
  if (value === null) return undefined
  // Some Microsoft Entra tenants send a single-valued complex attribute (the enterprise manager)
  // as a one-element list, `[{"$ref":null,"value":"…"}]`: that element is the value.
  if (!definition.multiValued && definition.type === 'complex' && Array.isArray(value) && value.length === 1)
    return canonicalSingle(definition, value[0]!)
  if (definition.type === 'complex') {
    // A bare string for a complex attribute with a value (a group member, a manager) is its value.
    const hasValue = definition.subAttributes?.some((sub) => sub.name === 'value')
    if (!isObject(value)) return hasValue && typeof value === 'string' ? { value } : value
    return canonicalObject(definition.subAttributes ?? [], value)
  }
  if (definition.type === 'boolean') return booleanOf(value)
  return value
}

/**
 * Attribute names are case-insensitive (RFC 7643 §2.1): an object's keys are renamed to the
 * schema's spelling, string booleans become booleans, nulls are dropped (null means "no
 * value", §2.5), and names the schema does not know are left out.
 */
export function canonicalObject(attributes: AttributeDefinition[], input: JsonObject): JsonObject {
  const known = byLowerName(attributes)
  const output: JsonObject = {}
  for (const [key, value] of Object.entries(input)) {
    const definition = known.get(key.toLowerCase())
    if (!definition) continue
    const canonical = canonicalValue(definition, value)
    if (canonical !== undefined) output[definition.name] = canonical
  }
  return output
}

/**
 * A resource in canonical form: core attributes by the core schema, each extension by its own
 * schema under its URN, plus the common attributes (`id`, `externalId`, `schemas`, `meta`).
 */
export function canonicalResource(core: SchemaDefinition, extensions: SchemaDefinition[], input: JsonObject): JsonObject {
  const output = canonicalObject(core.attributes, input)
  const extensionByUrn = new Map(extensions.map((extension) => [extension.id.toLowerCase(), extension]))
  for (const [key, value] of Object.entries(input)) {
    const lower = key.toLowerCase()
    const extension = extensionByUrn.get(lower)
    if (extension && isObject(value)) {
      const attributes = canonicalObject(extension.attributes, value)
      if (Object.keys(attributes).length > 0) output[extension.id] = attributes
    } else if (lower === 'externalid' && typeof value === 'string') {
      output.externalId = value
    } else if (lower === 'id' && typeof value === 'string') {
      output.id = value
    }
  }
  return output
}
