import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { buildApp as buildPlatform } from '@svc/platform'
import { startTestService, testServerUrl, until, type TestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// A managed PostgreSQL fails over, restarts and drops connections: the services ride through it
// (decision 0013, "Database blips"). The connections are cut for real, with pg_terminate_backend,
// while a transaction holds one and while pg-boss works; the process must stay up, requests in
// flight fail with a clean 503, readiness reports the database until it is back, and the jobs go on.
const server = testServerUrl()
if (!server) {
  t.plan(0, 'cutting connections needs PostgreSQL (TEST_DATABASE_URL; the PostgreSQL pass of pnpm test sets it)')
} else {
  await blips(server)
}

async function blips(server: string) {
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  t.teardown(() => admin.end())

  async function databaseOf(service: TestService): Promise<string> {
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(service.app.database.db)
    return rows[0]!.name
  }
  /** Ends every connection the service holds to its database, as a failover would. */
  async function cut(database: string): Promise<number> {
    const { rowCount } = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    )
    return rowCount ?? 0
  }
  /** The database refuses new connections (and the open ones are cut) until `up`. */
  const down = async (database: string) => {
    await admin.query(`alter database "${database}" allow_connections false`)
    await cut(database)
  }
  const up = (database: string) => admin.query(`alter database "${database}" allow_connections true`)

  const product = await startTestService(t, buildApp)
  const productDb = await databaseOf(product)
  t.teardown(() => up(productDb))
  const { orgId, person } = await alertingOrganization(product, 'blips', { responder: 'responder' })
  const owner = person('owner')
  const config = (
    await product.app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/webhooks`,
      headers: owner.headers,
      payload: { name: 'Blips' },
    })
  ).json() as { ingestPath: string }
  /**
   * Ingests an alert. A request that meets a connection while it is being cut may fail: only ever
   * with a clean 503, and the next one works (the pool drops the dead connection).
   */
  const ingest = (title: string) =>
    until(`the alert "${title}" to be taken`, async () => {
      const answer = await product.app.inject({
        method: 'POST',
        url: config.ingestPath,
        headers: { 'content-type': 'application/json' },
        payload: { title },
      })
      if (answer.statusCode !== 202) t.match(answer.json(), { statusCode: 503, code: 'DATABASE_UNAVAILABLE' }, 'a clean 503')
      return answer.statusCode === 202 ? (answer.json().alertId as string) : undefined
    })
  const dispatched = (alertId: string) =>
    until(
      `the created event of ${alertId} to be dispatched by the job queue`,
      async () => {
        // The probe's own query may meet a connection being cut: it just looks again.
        const row = await product.app.database.db
          .selectFrom('divinux.alertEvents')
          .select('dispatchedAt')
          .where('alertId', '=', alertId)
          .where('type', '=', 'created')
          .executeTakeFirst()
          .catch(() => undefined)
        return row?.dispatchedAt ? true : undefined
      },
      30_000,
    )

  t.test(
    'connections cut, then cut again once the service connected anew, while pg-boss works: it stays up and its jobs go on',
    async (t) => {
      const before = await ingest('Before the blips')
      t.ok((await cut(productDb)) > 0, 'connections were cut')
      // Taking an alert again needs a new connection: the second cut meets the pool refilled.
      const between = await ingest('Between the blips')
      t.ok((await cut(productDb)) > 0, 'and cut again')
      const after = await ingest('After the blips')
      await dispatched(before)
      await dispatched(between)
      await dispatched(after)
    },
  )

  t.test('a connection cut in the middle of a transaction fails that transaction, not the process', async (t) => {
    const db = product.app.database.db
    await t.rejects(
      db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx)
        // Idle in transaction: the connection is checked out and no statement runs when it is cut.
        await cut(productDb)
        await new Promise((resolve) => setTimeout(resolve, 300))
        await sql`select 1`.execute(trx)
      }),
    )
    // A statement that meets another connection being cut may fail; the pool then hands out a new one.
    const one = await until(
      'a working connection',
      async () => (await sql<{ one: number }>`select 1 as one`.execute(db).catch(() => undefined))?.rows[0]?.one,
    )
    t.equal(one, 1, 'the pool gives the next caller a working connection')
  })

  t.test('while the database refuses connections: 503 with Retry-After, readiness says so; then everything is back', async (t) => {
    await down(productDb)
    try {
      const refused = await product.app.inject({
        method: 'GET',
        url: `/api/v1/organizations/${orgId}/alerts`,
        headers: person('responder').headers,
      })
      t.equal(refused.statusCode, 503)
      t.match(refused.json(), { code: 'DATABASE_UNAVAILABLE' })
      t.ok(Number(refused.headers['retry-after']) > 0)
      const ready = await product.app.inject({ method: 'GET', url: '/api/v1/health/ready' })
      t.equal(ready.statusCode, 503)
      t.match(ready.json(), { checks: { database: 'unavailable' } })
      t.equal((await product.app.inject({ method: 'GET', url: '/api/v1/health/live' })).statusCode, 200, 'the process is alive')
    } finally {
      await up(productDb)
    }
    await until('readiness to come back', async () =>
      (await product.app.inject({ method: 'GET', url: '/api/v1/health/ready' })).statusCode === 200 ? true : undefined,
    )
    await dispatched(await ingest('After the outage'))
  })

  t.test('the platform service rides through a cut as well, its report jobs included', async (t) => {
    const platform = await startTestService(t, buildPlatform, {
      config: { reportsSigningKey: 'a report signing key of at least 32 characters' },
    })
    const platformDb = await databaseOf(platform)
    const someone = await platform.signIn('blips@platform.example')
    const created = await platform.app.inject({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: someone.headers,
      payload: { name: 'Blips', slug: 'blips-platform' },
    })
    t.equal(created.statusCode, 201)
    t.ok((await cut(platformDb)) > 0)
    const organizationId = created.json().id as string
    // A request that meets a connection being cut fails cleanly (503, to be tried again); the next one works.
    const report = await until('a report request after the cut', async () => {
      const answer = await platform.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${organizationId}/reports/generate`,
        headers: someone.headers,
        payload: { type: 'audit-log', format: 'csv', from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() },
      })
      if (answer.statusCode === 503) t.match(answer.json(), { code: 'DATABASE_UNAVAILABLE' })
      else t.equal(answer.statusCode, 202)
      return answer.statusCode === 202 ? answer : undefined
    })
    t.ok(report)
    await cut(platformDb)
    await until(
      'the report to be written after the cuts',
      async () => {
        const listed = await platform.app.inject({
          method: 'GET',
          url: `/api/v1/organizations/${organizationId}/reports`,
          headers: someone.headers,
        })
        return listed.json().data?.[0]?.status === 'ready' ? true : undefined
      },
      60_000,
    )
  })
}
