// What the database benchmarks share: a PostgreSQL database of their own (TEST_DATABASE_URL,
// or the server on 127.0.0.1:5432), created and dropped around the run, the platform API built
// on it the way server.ts builds it, and the timing of one route through `inject`.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import type { Kysely } from 'kysely'
import type { DB } from '@svc/db'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { localPostgresReachable, startTestIssuer, testConfig, type TestIssuer } from '@svc/testkit'

export interface BenchService {
  app: FastifyInstance
  db: Kysely<DB>
  issuer: TestIssuer
}

/** A fresh PostgreSQL database for one benchmark; `drop` removes it. */
export async function createBenchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL || (await localPostgresReachable())
  if (!server) {
    console.error('no PostgreSQL server: set TEST_DATABASE_URL')
    process.exit(2)
  }
  const name = `${prefix}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

export async function withBenchService(prefix: string, run: (service: BenchService) => Promise<void>): Promise<void> {
  const database = await createBenchDatabase(prefix)
  const teardowns: Array<() => unknown> = []
  try {
    const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
    const config = testConfig(issuer, { databaseUrl: database.url, rateLimit: { max: 1_000_000, timeWindow: '1 minute' } })
    const resources = await openResources(config)
    teardowns.push(() => resources.close())
    const app = await buildApp(config, resources)
    teardowns.push(() => app.close())
    await run({ app, db: resources.database.db, issuer })
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    await database.drop()
  }
}

/** Times GET `path` (5 warm-ups, then `samples` requests); answers the median, p95 and the last body. */
export async function timeRoute(app: FastifyInstance, path: string, headers: Record<string, string>, samples = 50) {
  for (let warm = 0; warm < 5; warm += 1) await app.inject({ method: 'GET', url: path, headers })
  const times: number[] = []
  let body: unknown
  for (let sample = 0; sample < samples; sample += 1) {
    const begin = process.hrtime.bigint()
    const response = await app.inject({ method: 'GET', url: path, headers })
    times.push(Number(process.hrtime.bigint() - begin) / 1e6)
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body}`)
    body = response.json()
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1)
  return { median: at(0.5), p95: at(0.95), body }
}
