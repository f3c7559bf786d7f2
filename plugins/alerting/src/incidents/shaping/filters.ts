import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { fieldsByKey, findTypeByKey } from './queries.js'

// The incident list's filters by type and custom field, as the query string gives them.

/** The id of the type keyed `key` (400 naming `type` when the organization has none such). */
export async function typeIdOf(db: Executor, organizationId: string, key: string): Promise<string> {
  const type = await findTypeByKey(db, organizationId, key)
  if (!type) throw invalidField('type', `is not an incident type of the organization (${key})`, 'querystring')
  return type.id
}

/**
 * Each `key:value` as the document an incident's fields must contain: a number for a number
 * field, the value in a list for a multi_select (any incident holding it among others), the text
 * otherwise. 400 naming the filter for an unknown field or a number that is not one.
 */
export async function fieldFilters(db: Executor, organizationId: string, filters: string[]): Promise<Array<Record<string, unknown>>> {
  if (filters.length === 0) return []
  const fields = await fieldsByKey(db, organizationId)
  return filters.map((filter, index) => {
    const colon = filter.indexOf(':')
    const key = filter.slice(0, colon)
    const text = filter.slice(colon + 1)
    const field = fields.get(key)
    if (!field) throw invalidField(`field/${index}`, `names no custom field of the organization (${key})`, 'querystring')
    if (field.kind === 'number') {
      const value = Number(text)
      if (text.trim() === '' || !Number.isFinite(value)) throw invalidField(`field/${index}`, `${key} is a number field`, 'querystring')
      return { [key]: value }
    }
    if (field.kind === 'multi_select') return { [key]: [text] }
    return { [key]: field.kind === 'service' ? text.toLowerCase() : text }
  })
}

/**
 * `key=value` words as chat gives them, as field values of their kinds: a number for a number
 * field, a list split at commas for a multi_select, the text otherwise; an unknown key is left as
 * text for the values' check to refuse by name.
 */
export async function fieldValuesOfWords(db: Executor, organizationId: string, words: Array<[string, string]>) {
  const fields = await fieldsByKey(db, organizationId)
  const values: Record<string, string | number | string[] | null> = {}
  for (const [key, text] of words) {
    const kind = fields.get(key)?.kind
    values[key] =
      text === ''
        ? null
        : kind === 'number' && Number.isFinite(Number(text))
          ? Number(text)
          : kind === 'multi_select'
            ? text.split(',')
            : text
  }
  return values
}
