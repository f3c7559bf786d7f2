import type { RawBuilder } from 'kysely'
import { compileFilter, type FilterScope } from './filter/compile.js'
import { parseFilter } from './filter/parse.js'
import type { JsonObject } from './schema/canonical.js'
import { LIST_RESPONSE_SCHEMA } from './schema/definitions.js'

const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000

export interface ListRequest {
  filter?: string
  startIndex?: number
  count?: number
}

/** RFC 7644 §3.4.2.4: startIndex below 1 counts as 1, a negative count as 0; counts above the maximum are capped. */
export function pageOf(query: ListRequest): { startIndex: number; offset: number; limit: number } {
  const startIndex = Math.max(1, query.startIndex ?? 1)
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(0, query.count ?? DEFAULT_PAGE_SIZE))
  return { startIndex, offset: startIndex - 1, limit }
}

/** The compiled `filter` parameter, or undefined when there is none; a bad filter is a 400 `invalidFilter`. */
export function filterOf(query: ListRequest, scope: FilterScope): RawBuilder<boolean> | undefined {
  return query.filter === undefined || query.filter.trim() === '' ? undefined : compileFilter(parseFilter(query.filter), scope)
}

export function listResponse(resources: JsonObject[], totalResults: number, startIndex: number) {
  return { schemas: [LIST_RESPONSE_SCHEMA], totalResults, itemsPerPage: resources.length, startIndex, Resources: resources }
}
