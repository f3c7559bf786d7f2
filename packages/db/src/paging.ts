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
 * One page of a query and the total it pages through, read together: `select` picks the
 * columns and the order (a total order, ending in a unique column, so pages never overlap);
 * the total counts `base` itself.
 */
export async function paged<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<{ rows: O[]; total: number }> {
  const [rows, count] = await Promise.all([
    select(base).offset(page.offset).limit(page.limit).execute(),
    // Generic over the table, Kysely cannot name the alias's type: it is stated once, here.
    base
      .select(sql<number>`count(*)::int`.as('total'))
      .$castTo<{ total: number }>()
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: count.total }
}

/** `value` as a LIKE pattern's literal text: `%`, `_` and the escape character itself escaped. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (character) => `\\${character}`)
}

/** A LIKE pattern matching text that contains `value` anywhere. */
export function containing(value: string): string {
  return `%${escapeLike(value)}%`
}
