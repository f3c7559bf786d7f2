import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { openDatabase } from '@svc/db'
import pg from 'pg'
import { migrationSetHash, prepareSchema } from './embedded-snapshot.js'
import type { TestContext } from './teardown.js'

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * Which PostgreSQL the tests run on: `TEST_DATABASE_URL` (an administrative connection
 * to a server where the tests may create databases), or nothing, which means PGlite in
 * process. `pnpm test` runs the suite once per engine.
 */
export function testServerUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined
}

/** True when something accepts connections on the local PostgreSQL port. */
export async function localPostgresReachable(): Promise<string | undefined> {
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: 5432, timeout: 1_000 })
    socket.once('connect', () => resolve(true))
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => resolve(false))
  }).finally(() => undefined)
  if (!reachable) return undefined
  const client = new pg.Client({ connectionString: LOCAL_SERVER, connectionTimeoutMillis: 2_000 })
  try {
    await client.connect()
    await client.query('select 1')
    return LOCAL_SERVER
  } catch {
    return undefined
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * The template's name names its content: every migration's name and code, so a changed or
 * added migration gets a template of its own and an old one is never cloned by mistake.
 */
function templateName(): string {
  return `test_template_${migrationSetHash()}`
}

// Any fixed number: the advisory lock that lets one test process build the template while
// the others (tap runs files in parallel) wait for it.
const TEMPLATE_LOCK = 4_207_113

async function withAdmin<T>(server: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.end()
  }
}

function databaseUrl(server: string, name: string): string {
  const url = new URL(server)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * Makes sure the migrated template exists: built once per server and migration set (the
 * migrations, then pg-boss's schema), under a scratch name renamed only when complete, so a
 * clone never sees half a template. Templates of older migration sets are dropped.
 */
async function ensureTemplate(server: string): Promise<string> {
  const template = templateName()
  await withAdmin(server, async (admin) => {
    const exists = async () => (await admin.query('select 1 from pg_database where datname = $1', [template])).rowCount === 1
    if (await exists()) return
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      if (await exists()) return
      const scratch = `${template}_building`
      await admin.query(`drop database if exists ${scratch} with (force)`)
      await admin.query(`create database ${scratch}`)
      const database = await openDatabase({ databaseUrl: databaseUrl(server, scratch), poolSize: 2 })
      try {
        await prepareSchema(database)
      } finally {
        await database.close()
      }
      await admin.query(`alter database ${scratch} rename to ${template}`)
      const stale = await admin.query<{ datname: string }>(
        "select datname from pg_database where datname like 'test\\_template\\_%' and datname <> $1",
        [template],
      )
      for (const { datname } of stale.rows) await admin.query(`drop database if exists ${datname} with (force)`)
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  })
  return template
}

/**
 * A database of the test's own: on PostgreSQL a clone of the migrated template (a file copy,
 * far faster than migrating), dropped at teardown; on PGlite `undefined` (every PGlite
 * instance in memory is already its own database). `empty` skips the template, for the tests
 * of the migrations themselves.
 */
export async function createTestDatabase(t: TestContext, options: { empty?: boolean } = {}): Promise<string | undefined> {
  const server = testServerUrl()
  if (!server) return undefined
  const template = options.empty ? 'template0' : await ensureTemplate(server)
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  await withAdmin(server, (admin) => admin.query(`create database ${name} template ${template}`))
  t.teardown(() => withAdmin(server, (admin) => admin.query(`drop database if exists ${name} with (force)`)))
  return databaseUrl(server, name)
}
