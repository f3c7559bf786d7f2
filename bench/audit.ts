// `pnpm bench:audit`: GET /api/v1/organizations/:orgId/audit-logs on 1,000,000 audit
// entries in PostgreSQL (TEST_DATABASE_URL, or the server on 127.0.0.1:5432), with every
// filter and with none, through the real route. Creates and drops its own database.
import { sql } from 'kysely'
import { timeRoute, withBenchService } from './database.js'

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000)

await withBenchService('bench_audit', async ({ app, db, issuer }) => {
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
    const { median, p95, body } = await timeRoute(app, `/api/v1/organizations/${target}/audit-logs${query}`, headers)
    console.log(`| ${label} | ${(body as { meta: { total: number } }).meta.total.toLocaleString()} | ${median} | ${p95} |`)
  }
})
