import { sql } from 'kysely'
import type { Executor } from './executor.js'

/**
 * Takes a transaction-scoped advisory lock named by `key` (hashed to PostgreSQL's 64-bit lock
 * id): whoever holds it until their transaction ends works alone on what the key names, so a
 * count-then-insert under a cap holds when requests race. Call it inside a transaction.
 */
export async function lockUntilCommit(db: Executor, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db)
}
