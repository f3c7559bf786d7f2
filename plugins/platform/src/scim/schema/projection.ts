import { isObject, type JsonObject } from './canonical.js'

const ALWAYS_RETURNED = ['id', 'schemas']

/** A requested attribute as keys into the resource: `name.givenName` → ['name', 'givenName']. */
function attributeKeys(requested: string): string[] {
  // Azure sends `emails[type eq "work"]` here; the attribute is what comes before the bracket.
  const bare = requested.split('[', 1)[0]!.trim()
  const colon = bare.lastIndexOf(':')
  if (colon < 0) return bare.split('.')
  const urn = bare.slice(0, colon)
  const rest = bare.slice(colon + 1).split('.')
  return urn.toLowerCase().includes(':core:') ? rest : [urn, ...rest]
}

function list(parameter: string | undefined): string[][] {
  return (parameter ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map(attributeKeys)
}

function keyOf(object: JsonObject, name: string): string | undefined {
  const lower = name.toLowerCase()
  return Object.keys(object).find((key) => key.toLowerCase() === lower)
}

function copyPath(from: JsonObject, to: JsonObject, keys: string[]): void {
  const [first = '', ...rest] = keys
  const key = keyOf(from, first)
  const value = key === undefined ? undefined : from[key]
  if (key === undefined || value === undefined) return
  if (rest.length === 0 || !isObject(value)) {
    if (rest.length === 0) to[key] = value
    else if (Array.isArray(value)) to[key] = value.map((item) => (isObject(item) ? pick(item, [rest]) : item))
    return
  }
  const existing = to[key]
  const target = isObject(existing) ? existing : {}
  copyPath(value, target, rest)
  if (Object.keys(target).length > 0) to[key] = target
}

function pick(resource: JsonObject, paths: string[][]): JsonObject {
  const picked: JsonObject = {}
  for (const path of paths) copyPath(resource, picked, path)
  return picked
}

function removePath(object: JsonObject, keys: string[]): void {
  const [first = '', ...rest] = keys
  const key = keyOf(object, first)
  if (key === undefined) return
  if (rest.length === 0) {
    if (!ALWAYS_RETURNED.includes(key)) delete object[key]
    return
  }
  const value = object[key]
  if (isObject(value)) removePath(value, rest)
  else if (Array.isArray(value)) for (const item of value) if (isObject(item)) removePath(item, rest)
}

/**
 * The `attributes` and `excludedAttributes` query parameters (RFC 7644 §3.4.2.5): with
 * `attributes`, only those (and `id`, `schemas`); with `excludedAttributes`, all but those.
 */
export function project(resource: JsonObject, query: { attributes?: string; excludedAttributes?: string }): JsonObject {
  const included = list(query.attributes)
  if (included.length > 0) {
    const always = ALWAYS_RETURNED.flatMap((key) => (resource[key] === undefined ? [] : [[key, resource[key]] as const]))
    return { ...pick(resource, included), ...Object.fromEntries(always) }
  }
  const excluded = list(query.excludedAttributes)
  if (excluded.length === 0) return resource
  const copy = structuredClone(resource)
  for (const path of excluded) removePath(copy, path)
  return copy
}
