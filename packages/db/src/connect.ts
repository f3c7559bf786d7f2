import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { CamelCasePlugin, Kysely, PostgresDialect, sql, type PostgresPool } from 'kysely'
import pg from 'pg'
import type { DB } from './generated.js'
import { PGlitePool, type SqlExecutor } from './pglite-pool.js'
import { ChangeNotices, CHANGES_CHANNEL } from './change-notices.js'
import { listenForChanges } from './change-listener.js'
import { DueNotices, DUE_CHANNEL } from './due-notices.js'
import { KeptStatementsClient, preparedName } from './kept-statements.js'

export interface DatabaseOptions {
  /** PostgreSQL URL; when absent the embedded PGlite database is used. */
  databaseUrl?: string
  /** Folder for the embedded database's files; `undefined` keeps it in memory (tests). */
  dataDir?: string
  /**
   * A PGlite data directory dump (`dumpDataDir`) an in-memory database starts from instead of
   * an empty cluster: the tests' already-migrated snapshot. Ignored on PostgreSQL and on disk.
   */
  seed?: Blob
  /** Connections per process on PostgreSQL. */
  poolSize?: number
  /**
   * Where the change listener connects on PostgreSQL, when `databaseUrl` goes through a pooler in
   * transaction mode: there a connection's LISTEN is not its own, so the pool's connections do not
   * listen, and this process hears its own changes through the listener, a moment after they
   * commit, instead of before the writing statement returns (decision 0029).
   */
  listenUrl?: string
  /**
   * A connection the server dropped, idle in the pool or checked out (a failover, a restart,
   * `pg_terminate_backend`): for the log. The pool replaces it; the work that held it fails.
   */
  onPoolError?: (error: Error) => void
}

export interface Database {
  /** Typed query builder: camelCase in TypeScript, snake_case in SQL. */
  db: Kysely<DB>
  /** The same connections for plain SQL (pg-boss). */
  sql: SqlExecutor
  /** The raw pool, for tools that build their own Kysely (code generation). */
  pool: PostgresPool
  kind: 'postgres' | 'pglite'
  /** The changes this process has heard of, for caches kept right by them (change-notices.ts). */
  changes: ChangeNotices
  /** When work kept in tables falls due, as this process hears it (due-notices.ts). */
  dueNotices: DueNotices
  /**
   * Runs a statement as a named prepared statement on PostgreSQL (named after its text, as
   * `keptPrepared` statements are), planned once per connection and reused, for hot statements
   * whose planning costs as much as their execution. On PGlite
   * it goes through the pool's kept statements like any other (parsed once, the name unused).
   * Rows come back as the database names their columns (no camelCase). A statement built with
   * `sql`, or one of a transaction, is marked `keptPrepared` instead (decision 0034).
   */
  prepared<R>(text: string, values: readonly unknown[]): Promise<R[]>
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

/** Closing twice (a failed readiness test, then teardown) is harmless. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => (closing ??= close())
}

function pinger(db: Kysely<DB>) {
  return async (timeoutMs = 2_000): Promise<void> => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      await Promise.race([sql`select 1`.execute(db), timeout])
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Only identifiers are renamed (decision 0004): the keys inside jsonb values (alert labels,
 * custom details, SCIM attributes, workflow conditions, check headers) are our users' data and
 * come back exactly as they were stored, so `kube_namespace` stays `kube_namespace`.
 */
const camelCase = new CamelCasePlugin({ maintainNestedObjectKeys: true })

// int8 as a JS number on both engines (PGlite's default); counts and sizes stay far below 2^53.
const INT8_OID = 20
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.listenUrl, options.onPoolError)
  return openPGlite(options.dataDir, options.seed)
}

function openPostgres(
  connectionString: string,
  max: number,
  listenUrl: string | undefined,
  onPoolError: (error: Error) => void = () => {},
): Database {
  const changes = new ChangeNotices(false)
  const dueNotices = new DueNotices(false)
  const pool = new pg.Pool({
    connectionString,
    max,
    Client: KeptStatementsClient,
    types: pgTypes,
    connectionTimeoutMillis: 5_000,
    // pg's default closes a connection idle for 10 s, so a node at rest, whose pollers use a few
    // connections by turns, opened one every 9 s (and PostgreSQL forked a backend for it); a
    // minute keeps those few open and still gives back what a burst opened (decision 0033).
    idleTimeoutMillis: 60_000,
    // Every connection listens before it is handed out, so a writer hears of its own change
    // before its statement returns and this process never serves what it has just changed from a
    // cache; the listener below hears the other replicas' changes while the pool has no
    // connection open. Behind a pooler in transaction mode (`listenUrl`) a LISTEN is not the
    // connection's own, and only the listener listens.
    onConnect: listenUrl
      ? undefined
      : async (client) => {
          client.on('notification', (notification) => changes.hear(notification))
          await client.query(`listen ${CHANGES_CHANNEL}`)
        },
  })
  // A connection the server drops emits 'error': the pool listens while it is idle, nobody while
  // it is checked out (between the statements of a transaction, say). Without a listener of our
  // own on every client, pg raises it as an uncaught error and the process ends; with it, the
  // work holding the connection fails on its next statement and the pool discards it.
  // An idle client's error reaches both listeners (the pool re-emits it): reported once.
  const reported = new WeakSet<Error>()
  const report = (error: Error) => {
    if (reported.has(error)) return
    reported.add(error)
    onPoolError(error)
  }
  pool.on('error', report)
  pool.on('connect', (client) => client.on('error', report))
  const listener = listenForChanges(listenUrl ?? connectionString, changes, dueNotices, report)
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [camelCase] })
  return {
    db,
    pool,
    sql: { executeSql: (text, values) => pool.query(text, values) },
    kind: 'postgres',
    changes,
    dueNotices,
    prepared: async <R>(text: string, values: readonly unknown[]) =>
      (await pool.query({ name: preparedName(text), text, values: [...values] })).rows as R[],
    ping: pinger(db),
    close: once(async () => {
      await listener.stop()
      await db.destroy()
    }),
  }
}

async function openPGlite(dataDir: string | undefined, seed: Blob | undefined): Promise<Database> {
  // The extensions the migrations create (pg_trgm: similar past incidents) ship with PGlite.
  const extensions = { pg_trgm }
  let pglite: PGlite
  if (dataDir) {
    const folder = path.resolve(dataDir, 'pglite')
    await mkdir(folder, { recursive: true })
    pglite = await PGlite.create(folder, { extensions })
  } else {
    pglite = await PGlite.create({ extensions, loadDataDir: seed })
  }
  // The pool keeps each statement parsed (pglite-pool.ts); every run is still planned with its
  // own values, as an unnamed statement is. A generic plan cannot use them: an insert whose
  // ON CONFLICT names a partial unique index through parameters would find no arbiter index.
  await pglite.exec('set plan_cache_mode = force_custom_plan')
  // One process, one connection: every change is heard in the answer of the statement that made
  // it (the pool's reader for statements, PGlite's own for scripts), so notices never lapse.
  const changes = new ChangeNotices(true)
  const dueNotices = new DueNotices(true)
  const pool = new PGlitePool(pglite, (notification) => {
    changes.hear(notification)
    dueNotices.hear(notification)
  })
  await pglite.listen(CHANGES_CHANNEL, (payload) => changes.receive(payload))
  await pglite.listen(DUE_CHANNEL, (payload) => dueNotices.hear({ channel: DUE_CHANNEL, payload }))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [camelCase] })
  return {
    db,
    pool,
    sql: pool,
    kind: 'pglite',
    changes,
    dueNotices,
    prepared: <R>(text: string, values: readonly unknown[]) => pool.statement<R>(text, values),
    ping: pinger(db),
    close: once(async () => {
      await db.destroy()
      await pglite.close()
    }),
  }
}

/** The whole embedded database as one uncompressed tarball, for `seed`. */
export async function dumpEmbedded(database: Database): Promise<Blob> {
  if (!(database.pool instanceof PGlitePool)) throw new Error('only an embedded database can be dumped')
  return database.pool.pglite.dumpDataDir('none')
}
