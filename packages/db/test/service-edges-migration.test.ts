import t from 'tap'
import { Migrator, sql } from 'kysely'
import { openDatabase } from '@svc/db'
import { migrations } from '@svc/migrations'
import { createTestDatabase } from '@svc/testkit'

// 0071 (issue 55) on an organization with a dependency map written by name: every name becomes a
// catalog service (or finds the one answering to it), every edge an edge between services.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl })
t.teardown(() => database.close())
const raw = database.db.withoutPlugins()
const migrator = new Migrator({ db: raw, provider: { getMigrations: async () => migrations } })
const before = await migrator.migrateTo('0070_services')
if (before.error) throw before.error

const rows = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(raw)).rows
const [{ id: orgId }] = (await rows<{ id: string }>(
  sql`insert into core.organizations (name, slug) values ('Map', 'map') returning id`,
)) as [{ id: string }]
await sql`insert into divinux.services (organization_id, key, name, aliases) values (${orgId}, 'payments', 'Payments', '{pay-api}')`.execute(
  raw,
)
const oldMap = [
  ['Checkout API', 'pay-api'],
  ['checkout-api', 'db'],
  ['inventory', 'db'],
  ['inventory', 'Payments'],
  ['!!!', 'db'],
]
for (const [service, dependsOn] of oldMap)
  await sql`insert into divinux.service_dependencies (organization_id, service, depends_on) values (${orgId}, ${service}, ${dependsOn})`.execute(
    raw,
  )
const after = await migrator.migrateTo('0071_service_edges')
if (after.error) throw after.error

t.test('each name finds its service or becomes one, keyed by its slug, the name an alias when they differ', async (t) => {
  t.same(await rows(sql`select key, name, aliases from divinux.services order by key`), [
    { key: 'checkout-api', name: 'Checkout API', aliases: ['checkout api'] },
    { key: 'db', name: 'db', aliases: [] },
    { key: 'inventory', name: 'inventory', aliases: [] },
    { key: 'payments', name: 'Payments', aliases: ['pay-api'] },
    { key: 'service-6dd07555', name: '!!!', aliases: ['!!!'] },
  ])
})

t.test('each edge joins the services its names answer to; names that are one service make one edge', async (t) => {
  t.same(
    await rows(sql`
      select a.key as service, b.key as depends_on from divinux.service_edges e
      join divinux.services a on a.id = e.service_id join divinux.services b on b.id = e.depends_on_id order by 1, 2`),
    [
      { service: 'checkout-api', depends_on: 'db' },
      { service: 'checkout-api', depends_on: 'payments' },
      { service: 'inventory', depends_on: 'db' },
      { service: 'inventory', depends_on: 'payments' },
      { service: 'service-6dd07555', depends_on: 'db' },
    ],
  )
  t.same(await rows(sql`select to_regclass('divinux.service_dependencies') is null as gone`), [{ gone: true }])
})

t.test('the migration goes down again, the edges by key', async (t) => {
  const down = await migrator.migrateTo('0070_services')
  if (down.error) throw down.error
  t.same(await rows(sql`select count(*)::int as n from divinux.service_dependencies`), [{ n: 5 }])
})
