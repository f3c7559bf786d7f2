import type { Fields } from './entry.js'

// A field whose name says it holds a credential is never written to the audit log; the
// entry records that it changed, not what it became.
const SECRET_FIELD = /secret|token|password|apikey|api_key|hash|private/i
const REDACTED = '[redacted]'

function comparable(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(comparable(a)) === JSON.stringify(comparable(b))
}

function shown(key: string, value: unknown): unknown {
  if (SECRET_FIELD.test(key)) return REDACTED
  return comparable(value) ?? null
}

/**
 * The before/after of the fields that changed. A creation lists every field of `after`, a
 * deletion every field of `before`; an update only the fields whose value differs.
 */
export function changedFields(before: Fields | null | undefined, after: Fields | null | undefined): { before?: Fields; after?: Fields } {
  if (!before && !after) return {}
  if (!before) return { after: Object.fromEntries(Object.entries(after ?? {}).map(([key, value]) => [key, shown(key, value)])) }
  if (!after) return { before: Object.fromEntries(Object.entries(before).map(([key, value]) => [key, shown(key, value)])) }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !same(before[key], after[key]))
  return {
    before: Object.fromEntries(keys.map((key) => [key, shown(key, before[key])])),
    after: Object.fromEntries(keys.map((key) => [key, shown(key, after[key])])),
  }
}
