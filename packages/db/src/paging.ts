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

/** The page's rows carry the total under this alias, removed before they are answered. */
const TOTAL = 'pagedTotal'

/**
 * One page of a query and the total it pages through, read in one statement: `select` picks the
 * columns and the order (a total order, ending in a unique column, so pages never overlap); the
 * total is `count(*) over ()`, the size of `base` itself before the limit, on every row. Only a
 * page past the end has no row to carry it, and then it is counted on its own.
 */
export async function paged<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<{ rows: O[]; total: number }> {
  const rows = await select(base)
    // Generic over the table, Kysely cannot name the alias's type: it is stated once, here.
    .select(sql<number>`count(*) over ()::int`.as(TOTAL))
    .$castTo<O & { [TOTAL]: number }>()
    .offset(page.offset)
    .limit(page.limit)
    .execute()
  const first = rows[0]
  if (first === undefined) return { rows: [], total: page.offset === 0 ? 0 : await countOf(base) }
  const total = first[TOTAL]
  // The total is the last column selected: deleting it leaves each row the shape `select` gave it.
  for (const row of rows) delete (row as Partial<typeof row>)[TOTAL]
  return { rows, total }
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
