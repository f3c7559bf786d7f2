import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import pgUtils from 'pg/lib/utils'

/** What pg-boss (and anything else speaking plain SQL) needs from a connection. */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

type Command = PostgresQueryResult<unknown>['command']

const { serialize } = protocol

/**
 * One statement as one message of the extended query protocol: parse, bind, describe, execute
 * and sync together, with the parameters converted as node-postgres converts them
 * (`prepareValue`), so the embedded database sees what PostgreSQL sees in production.
 *
 * Written here because `pglite.query` sends those five steps and a statement description as six
 * calls into the WebAssembly backend, to learn the parameters' types and serialize by type;
 * PostgreSQL infers them from text parameters as it does for `pg`. One call instead of six
 * saves about 100 µs a statement (docs/benchmarks.md, 2026-11-28, sixth session).
 */
function extendedQuery(text: string, parameters: ReadonlyArray<unknown>): Uint8Array {
  const parts = [
    serialize.parse({ text }),
    serialize.bind({ values: parameters.map((value) => pgUtils.prepareValue(value)) }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  ]
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    message.set(part, offset)
    offset += part.length
  }
  return message
}

/** One statement with its parameters, as `extendedQuery` sends it. */
async function runStatement<R>(pglite: PGlite, text: string, parameters: ReadonlyArray<unknown>): Promise<Results<R>> {
  const { messages } = await pglite.execProtocol(extendedQuery(text, parameters))
  // parseResults answers at least one result, empty for a statement that returns none.
  return parse.parseResults(messages, pglite.parsers)[0] as Results<R>
}

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
        const result = await runStatement<R>(pglite, sql, parameters)
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
      const result = await runStatement(this.pglite, text, values)
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
