import { protocol, type PGlite } from '@electric-sql/pglite'
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import pgUtils from 'pg/lib/utils'
import type {
  BackendMessage,
  CommandCompleteMessage,
  DatabaseError,
  DataRowMessage,
  NotificationResponseMessage,
  RowDescriptionMessage,
} from 'pg-protocol/dist/messages'
import { Parser } from 'pg-protocol/dist/parser'

/** What pg-boss (and anything else speaking plain SQL) needs from a connection. */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

type Command = PostgresQueryResult<unknown>['command']

const { serialize } = protocol

/** Statements parsed once and kept by the backend, at most this many at a time (least recently used go). */
export const STATEMENTS_KEPT = 256

/**
 * The command tags of statements that may change the schema. After one, every kept statement
 * is closed: PostgreSQL replans a kept statement when a table it reads changes, but refuses to
 * run one whose result columns changed ("cached plan must not change result type").
 */
const SCHEMA_CHANGES = new Set(['CREATE', 'ALTER', 'DROP', 'COMMENT', 'GRANT', 'REVOKE', 'TRUNCATE', 'DO', 'DISCARD', 'DEALLOCATE'])

/** What follows every statement's bind: describe the portal (its columns), run it, end the exchange. */
const EXECUTE = [serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]

/** What one statement answered: its rows (columns parsed by type), and its command tag's verb and count. */
interface StatementResult<R> {
  rows: R[]
  command: string | undefined
  affectedRows: number
}

type TypeParsers = PGlite['parsers']

/** Where the backend's notifications (LISTEN) go: they come in the answer of the statement whose commit sent them. */
export type NotificationHandler = (notification: NotificationResponseMessage) => void

/**
 * Reads the backend's answer to one statement with node-postgres's own protocol parser, the one
 * production's connections use: PGlite's parser copies every field's bytes before decoding them,
 * which was a sixth of an alert list's time (decision 0002).
 * The first error the backend reported is thrown, as `pglite.execProtocol` throws it.
 */
function resultOf<R>(chunks: Uint8Array[], parsers: TypeParsers, onNotification: NotificationHandler): StatementResult<R> {
  const result: StatementResult<R> = { rows: [], command: undefined, affectedRows: 0 }
  let names: string[] = []
  let types: number[] = []
  let error: Error | undefined
  const parser = new Parser()
  const read = (message: BackendMessage) => {
    switch (message.name) {
      case 'rowDescription':
        names = (message as RowDescriptionMessage).fields.map((field) => field.name)
        types = (message as RowDescriptionMessage).fields.map((field) => field.dataTypeID)
        break
      case 'dataRow': {
        const values = (message as DataRowMessage).fields
        const row: Record<string, unknown> = {}
        for (let index = 0; index < values.length; index += 1) {
          const value = values[index]
          const type = types[index]!
          const parse = parsers[type]
          row[names[index]!] = value === null || value === undefined || !parse ? value : parse(value, type)
        }
        result.rows.push(row as R)
        break
      }
      case 'commandComplete': {
        const words = (message as CommandCompleteMessage).text.split(' ')
        result.command = words[0]
        if (COUNTED.has(result.command ?? '')) result.affectedRows += Number(words.at(-1))
        break
      }
      case 'error':
        error ??= message as DatabaseError
        break
      case 'notification':
        onNotification(message as NotificationResponseMessage)
        break
    }
  }
  for (const chunk of chunks) parser.parse(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), read)
  if (error) throw error
  return result
}

/** The command tags whose count is of rows changed. */
const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE'])

function concatenated(parts: Uint8Array[]): Uint8Array {
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    message.set(part, offset)
    offset += part.length
  }
  return message
}

/**
 * The embedded backend's statements, each parsed once under a name of its own and then only
 * bound and executed, as a PostgreSQL driver with prepared statements does: parsing and
 * analysing are a large share of a small statement's time in PGlite (with the parser below, the
 * member rule's lookup went from about 500 to 190 µs; decision 0002). Each run is still planned
 * with its own values (`plan_cache_mode`, set in connect.ts). PGlite is one connection, so one set
 * of names serves every holder. Each statement is sent as one message of the extended query
 * protocol (bind, describe, execute and sync, after a parse the first time), with the parameters
 * converted as
 * node-postgres converts them (`prepareValue`), so the embedded database sees what PostgreSQL
 * sees in production; `pglite.query` would instead make six calls into the WebAssembly backend
 * per statement, to learn the parameters' types and serialize by type.
 *
 * Written here because PGlite keeps no statements itself and Kysely's dialect sends text.
 */
class StatementCache {
  /** Statement text to the name it was parsed under, least recently used first. */
  readonly #names = new Map<string, string>()
  /** Names to close with the next message (evicted, or left by a failed parse). */
  #closing: string[] = []
  #counter = 0

  constructor(
    readonly pglite: PGlite,
    readonly onNotification: NotificationHandler,
  ) {}

  async run<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<StatementResult<R>> {
    const values = parameters.map((value) => pgUtils.prepareValue(value))
    const kept = this.#names.get(text)
    if (kept !== undefined) {
      // Most recently used last.
      this.#names.delete(text)
      this.#names.set(text, kept)
      return this.#send<R>([serialize.bind({ statement: kept, values })])
    }
    const name = `svc_${++this.#counter}`
    this.#names.set(text, name)
    if (this.#names.size > STATEMENTS_KEPT) this.#evictOldest()
    try {
      return await this.#send<R>([serialize.parse({ name, text }), serialize.bind({ statement: name, values })])
    } catch (error) {
      // The parse may or may not have succeeded before the error: close the name either way
      // (closing a name that does not exist is no error) and parse again next time.
      this.#names.delete(text)
      this.#closing.push(name)
      throw error
    }
  }

  #evictOldest(): void {
    const [text, name] = this.#names.entries().next().value as [string, string]
    this.#names.delete(text)
    this.#closing.push(name)
  }

  /** Closes every kept statement with the next message: the schema may have changed. */
  closeAll(): void {
    for (const name of this.#names.values()) this.#closing.push(name)
    this.#names.clear()
  }

  /** Pending closes, then the statement's parse and bind, then describe, execute and sync. */
  async #send<R>(statement: Uint8Array[]): Promise<StatementResult<R>> {
    const closes = this.#closing.map((name) => serialize.close({ type: 'S', name }))
    this.#closing = []
    const chunks: Uint8Array[] = []
    // The backend reuses the memory it hands out: each chunk is copied before the next is written.
    await this.pglite.execProtocolRawStream(concatenated([...closes, ...statement, ...EXECUTE]), {
      onRawData: (chunk) => chunks.push(chunk.slice()),
    })
    const result = resultOf<R>(chunks, this.pglite.parsers, this.onNotification)
    if (result.command !== undefined && SCHEMA_CHANGES.has(result.command)) this.closeAll()
    return result
  }
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
  readonly #statements: StatementCache

  constructor(
    readonly pglite: PGlite,
    onNotification: NotificationHandler = () => {},
  ) {
    this.#statements = new StatementCache(pglite, onNotification)
  }

  async connect(): Promise<PostgresPoolClient> {
    let release!: () => void
    const previous = this.#tail
    this.#tail = new Promise<void>((resolve) => {
      release = resolve
    })
    await previous
    const statements = this.#statements
    let released = false
    return {
      async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
        const result = await statements.run<R>(sql, parameters)
        return {
          command: (result.command ?? 'SELECT') as Command,
          rowCount: result.affectedRows,
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
    if (values !== undefined && values.length > 0) return { rows: await this.statement(text, values) }
    const client = await this.connect()
    try {
      // Scripts (pg-boss's schema) may change anything the kept statements read.
      this.#statements.closeAll()
      const results = await this.pglite.exec(text)
      return { rows: results.at(-1)?.rows ?? [] }
    } finally {
      client.release()
    }
  }

  /** One statement, kept parsed, with or without parameters (`Database.prepared`): its rows as the database names their columns. */
  async statement<R>(text: string, values: ReadonlyArray<unknown>): Promise<R[]> {
    const client = await this.connect()
    try {
      return (await this.#statements.run<R>(text, values)).rows
    } finally {
      client.release()
    }
  }

  async end(): Promise<void> {
    // The owner of the PGlite instance closes it, after every holder has released.
    await this.#tail
  }
}
