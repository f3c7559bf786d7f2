import { randomBytes } from 'node:crypto'
import net from 'node:net'
import pg from 'pg'
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
 * A database of the test's own: on PostgreSQL a freshly created one, dropped at teardown;
 * on PGlite `undefined` (every PGlite instance in memory is already its own database).
 */
export async function createTestDatabase(t: TestContext): Promise<string | undefined> {
  const server = testServerUrl()
  if (!server) return undefined
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  t.teardown(async () => {
    const dropper = new pg.Client({ connectionString: server })
    await dropper.connect()
    try {
      await dropper.query(`drop database if exists ${name} with (force)`)
    } finally {
      await dropper.end()
    }
  })
  const url = new URL(server)
  url.pathname = `/${name}`
  return url.toString()
}
