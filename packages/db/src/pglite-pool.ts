import type { PGlite } from '@electric-sql/pglite'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'

/** What pg-boss (and anything else speaking plain SQL) needs from a connection. */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

type Command = PostgresQueryResult<unknown>['command']

/**
 * A one-connection "pool" over PGlite for Kysely's own PostgresDialect.
 *
 * PGlite is a single PostgreSQL backend, so a transaction is a stretch of statements on
 * that one connection. `connect()` hands the connection out to one holder at a time (FIFO)
 * until `release()`, which keeps one request's BEGIN..COMMIT from interleaving with
 * another's statements. A holder must not wait on a second `connect()` (for example, a
 * query on `db` inside a `db.transaction()` callback): use the transaction's executor.
 */
export class PGlitePool implements PostgresPool, SqlExecutor {
  #tail: Promise<void> = Promise.resolve()

  constructor(readonly pglite: PGlite) {}

  async connect(): Promise<PostgresPoolClient> {
    let release!: () => void
    const previous = this.#tail
    this.#tail = new Promise<void>((resolve) => {
      release = resolve
    })
    await previous
    const { pglite } = this
    let released = false
    return {
      async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
        const result = await pglite.query<R>(sql, [...parameters])
        return {
          command: ((result as { command?: string }).command ?? 'SELECT') as Command,
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        }
      },
      release() {
        if (released) return
        released = true
        release()
      },
    } as PostgresPoolClient
  }

  /**
   * Statements without parameters may hold several commands (pg-boss's schema scripts do),
   * which only the simple query protocol (`exec`) accepts; the last result's rows answer.
   */
  async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
    const client = await this.connect()
    try {
      if (values === undefined || values.length === 0) {
        const results = await this.pglite.exec(text)
        return { rows: results.at(-1)?.rows ?? [] }
      }
      const result = await this.pglite.query(text, values)
      return { rows: result.rows }
    } finally {
      client.release()
    }
  }

  async end(): Promise<void> {
    // The owner of the PGlite instance closes it, after every holder has released.
    await this.#tail
  }
}
