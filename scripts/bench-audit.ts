// `pnpm bench:audit`: GET /api/v1/organizations/:orgId/audit-logs on 1,000,000 audit
// entries in PostgreSQL (TEST_DATABASE_URL, or the server on 127.0.0.1:5432), with every
// filter and with none, through the real route. Creates and drops its own database.
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { localPostgresReachable, startTestIssuer, testConfig } from '@svc/testkit'

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000)
const SAMPLES = 50

const server = process.env.TEST_DATABASE_URL || (await localPostgresReachable())
if (!server) {
  console.error('no PostgreSQL server: set TEST_DATABASE_URL')
  process.exit(2)
}
const name = `bench_audit_${randomBytes(4).toString('hex')}`
const admin = new pg.Client({ connectionString: server })
await admin.connect()
await admin.query(`create database ${name}`)
const url = new URL(server)
url.pathname = `/${name}`

const teardowns: Array<() => unknown> = []
try {
  const issuer = await startTestIssuer({ teardown: (fn) => teardowns.push(fn) })
  const config = testConfig(issuer, { databaseUrl: url.toString(), rateLimit: { max: 1_000_000, timeWindow: '1 minute' } })
  const resources = await openResources(config)
  teardowns.push(() => resources.close())
  const app = await buildApp(config, resources)
  teardowns.push(() => app.close())
  const db = resources.database.db

  const token = issuer.idp.mintIdToken({ email: 'auditor@bench.example' })
  const headers = { authorization: `Bearer ${token}` }
  const me = (await app.inject({ method: 'GET', url: '/auth/me', headers })).json() as { userId: string }
  const organizations = await db
    .insertInto('core.organizations')
    .values(Array.from({ length: 10 }, (_, index) => ({ name: `Org ${index}`, slug: `bench-org-${index}` })))
    .returning('id')
    .execute()
  const target = organizations[0]!.id
  await db.insertInto('core.organizationMembers').values({ organizationId: target, userId: me.userId, role: 'member' }).execute()
  const actors = Array.from({ length: 50 }, () => crypto.randomUUID())

  console.log(`seeding ${ROWS.toLocaleString()} audit entries (half of them in the organization under test)...`)
  const started = Date.now()
  // Half the rows belong to the organization under test, the rest to nine others; five
  // products, six entity types, four actions, fifty actors, one entry every 7 s back in time.
  await sql`
    insert into core.audit_logs (organization_id, actor_type, actor_user_id, product, entity_type, entity_id, action, changes, created_at)
    select
      case when g % 2 = 0 then ${target}::uuid else (${sql.val(organizations.map((org) => org.id))}::uuid[])[1 + (g / 2) % 10] end,
      'user',
      (${sql.val(actors)}::uuid[])[1 + g % 50],
      (array['platform', 'statuspages', 'alerting', 'synthetics', 'insights'])[1 + g % 5],
      (array['organization', 'member', 'alert', 'check', 'page', 'rca'])[1 + (g / 5) % 6],
      g::text,
      (array['created', 'updated', 'deleted', 'acknowledged'])[1 + (g / 7) % 4],
      '{"after": {"field": "value"}}'::jsonb,
      now() - make_interval(secs => g * 7)
    from generate_series(1, ${ROWS}) as g`.execute(db)
  // As autovacuum would have by now: statistics, and the visibility map index-only scans need.
  await sql`vacuum analyze core.audit_logs`.execute(db)
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const from = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString()
  const to = new Date().toISOString()
  const queries = {
    'every filter': `?product=alerting&entityType=alert&action=updated&actorId=${actors[12]}&from=${from}&to=${to}`,
    'actor only': `?actorId=${actors[12]}`,
    'product and 30 days': `?product=alerting&from=${from}&to=${to}`,
    'no filter, page 1': '',
    'no filter, page 500': '?page=500',
  }
  console.log(`\n| query (limit 20) | matching rows | median (ms) | p95 (ms) |\n|---|---:|---:|---:|`)
  for (const [label, query] of Object.entries(queries)) {
    const path = `/api/v1/organizations/${target}/audit-logs${query}`
    for (let warm = 0; warm < 5; warm += 1) await app.inject({ method: 'GET', url: path, headers })
    const times: number[] = []
    let total = 0
    for (let sample = 0; sample < SAMPLES; sample += 1) {
      const begin = process.hrtime.bigint()
      const response = await app.inject({ method: 'GET', url: path, headers })
      times.push(Number(process.hrtime.bigint() - begin) / 1e6)
      if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body}`)
      total = (response.json() as { meta: { total: number } }).meta.total
    }
    times.sort((a, b) => a - b)
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1)
    console.log(`| ${label} | ${total.toLocaleString()} | ${at(0.5)} | ${at(0.95)} |`)
  }
} finally {
  for (const teardown of teardowns.reverse()) await teardown()
  await admin.query(`drop database if exists ${name} with (force)`)
  await admin.end()
}
