import { sql, type SelectQueryBuilder } from 'kysely'

/** A slice of a list: rows `offset` to `offset + limit`. */
export interface Page {
  offset: number
  limit: number
}

/** The page the API's `page` (from 1) and `limit` query parameters ask for. */
export function pageOf({ page, limit }: { page: number; limit: number }): Page {
  return { offset: (page - 1) * limit, limit }
}

/**
 * One page of a query and the total it pages through: `select` picks the columns and the order (a
 * total order, ending in a unique column, so pages never overlap). A page that is not full ends
 * the list, so its total is known without counting: most lists are read in one statement. A full
 * page, or one past the end, is counted on its own, from `base` alone, which the planner can answer
 * from an index without the page's columns or order. (`count(*) over ()` on the page's statement,
 * as lists once read their totals, made every matching row be read, sorted and carried whole to count
 * it: an audit log of 550,000 entries paged in 280 ms instead of 85, and one actor's 20,000 in 88
 * instead of 6.)
 */
export async function paged<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<{ rows: O[]; total: number }> {
  const rows = await select(base).offset(page.offset).limit(page.limit).execute()
  if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length }
  return { rows, total: await countOf(base) }
}

async function countOf<DB, TB extends keyof DB>(base: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const count = await base
    .select(sql<number>`count(*)::int`.as('total'))
    .$castTo<{ total: number }>()
    .executeTakeFirstOrThrow()
  return count.total
}

/** `value` as a LIKE pattern's literal text: `%`, `_` and the escape character itself escaped. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (character) => `\\${character}`)
}

/** A LIKE pattern matching text that contains `value` anywhere. */
export function containing(value: string): string {
  return `%${escapeLike(value)}%`
}
