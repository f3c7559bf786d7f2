import type { Kysely, Transaction } from 'kysely'
import type { DB } from './generated.js'

/** A query runs on the database or inside a transaction the caller opened. */
export type Executor = Kysely<DB> | Transaction<DB>
