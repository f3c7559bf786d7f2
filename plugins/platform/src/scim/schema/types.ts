import { ScimError } from '../errors.js'
import { isObject, type Json, type JsonObject } from './canonical.js'
import type { AttributeDefinition } from './definitions.js'

function fits(definition: AttributeDefinition, value: Json): boolean {
  switch (definition.type) {
    case 'boolean':
      return typeof value === 'boolean'
    case 'integer':
    case 'decimal':
      return typeof value === 'number'
    case 'complex':
      return isObject(value)
    default:
      return typeof value === 'string'
  }
}

/** Checks a canonical object against its schema: a value of the wrong type is a 400 `invalidValue`. */
export function checkTypes(attributes: AttributeDefinition[], object: JsonObject, prefix = ''): void {
  for (const definition of attributes) {
    const value = object[definition.name]
    if (value === undefined) continue
    const path = prefix ? `${prefix}:${definition.name}` : definition.name
    const values = definition.multiValued ? value : [value]
    if (!Array.isArray(values)) throw new ScimError(400, `${path} must be a list`, 'invalidValue')
    for (const item of values) {
      if (!fits(definition, item))
        throw new ScimError(400, `${path} must be ${definition.type === 'complex' ? 'an object' : `a ${definition.type}`}`, 'invalidValue')
      if (definition.type === 'complex' && isObject(item)) checkTypes(definition.subAttributes ?? [], item, path)
    }
  }
}
