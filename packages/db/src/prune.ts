import { sql, type RawBuilder } from 'kysely'
import type { Executor } from './executor.js'

/** Rows one statement deletes at most: short statements, short locks, however much is due. */
export const PRUNE_BATCH = 5_000

/**
 * Deletes the rows of `table` matching `condition`, `batch` at a time, each batch its own
 * statement (and so its own transaction outside one), until none is left: retention for tables
 * whose rows are referenced or keyed in ways a partition cannot be (decision 0022). The condition
 * is checked again by the delete itself, so a row changed between the two is judged as it is now.
 */
export async function deleteInBatches(
  db: Executor,
  table: `${string}.${string}`,
  condition: RawBuilder<unknown>,
  batch = PRUNE_BATCH,
): Promise<number> {
  let removed = 0
  for (;;) {
    const { numAffectedRows } = await sql`
      delete from ${sql.raw(table)}
       where ctid = any(array(select ctid from ${sql.raw(table)} where ${condition} limit ${batch})) and ${condition}`.execute(db)
    const count = Number(numAffectedRows ?? 0)
    removed += count
    if (count < batch) return removed
  }
}
