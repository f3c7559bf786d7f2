import { gunzipSync } from 'node:zlib'
import { sql } from 'kysely'
import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createTestDatabase } from '@svc/testkit'
import { FRESH_FOR_MS, MISSES_KEPT, createPublicCache } from '../src/public/cache.js'

// The cache of public documents against a real database (PGlite, or PostgreSQL in that pass).
const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
t.teardown(() => database.close())
await migrateToLatest(database.db)
const db = database.db
const organization = await db
  .insertInto('core.organizations')
  .values({ name: 'Cache', slug: 'cache' })
  .returning('id')
  .executeTakeFirstOrThrow()
const page = await db
  .insertInto('divinux.statusPages')
  // Its custom domain is verified: only then does the Host header find it (decision 0015, "Custom domains").
  .values({
    organizationId: organization.id,
    name: 'Cache',
    slug: 'cached',
    customDomain: 'status.cache.example',
    customDomainVerifiedAt: new Date(),
    published: true,
  })
  .returning('id')
  .executeTakeFirstOrThrow()

let clock = 1_000_000
const cache = createPublicCache(db, () => clock)
let renders = 0
const render = async () => {
  renders += 1
  return { body: `{"render":${renders}}`, contentType: 'application/json', headers: { 'cache-control': 'public, max-age=30' } }
}

t.test('a document is rendered once per page revision; another replica’s change shows within a second', async (t) => {
  const found = await cache.bySlug('cached')
  t.equal(found?.id, page.id)
  t.same(await cache.byDomain('status.cache.example'), found)
  const first = await cache.document(found!, 'summary', render)
  t.equal(first.identity.bytes.toString(), '{"render":1}')
  t.equal(gunzipSync(first.gzip.bytes).toString(), '{"render":1}')
  t.equal(first.gzip.etag, `${first.identity.etag.slice(0, -1)}-gzip"`)
  t.same(first.gzip.headers, {
    'cache-control': 'public, max-age=30',
    etag: first.gzip.etag,
    'content-type': 'application/json',
    'content-encoding': 'gzip',
  })
  t.same(first.identity.notModified, { 'cache-control': 'public, max-age=30', etag: first.identity.etag }, 'a 304 carries no type')
  t.equal(await cache.document((await cache.bySlug('cached'))!, 'summary', render), first, 'served from memory')

  // Another replica changes the page: this one notices once its second is up.
  await sql`update divinux.status_pages set revision = revision + 1 where id = ${page.id}`.execute(db)
  t.equal((await cache.document((await cache.bySlug('cached'))!, 'summary', render)).identity.bytes.toString(), '{"render":1}')
  clock += FRESH_FOR_MS
  const fresh = await cache.document((await cache.bySlug('cached'))!, 'summary', render)
  t.equal(fresh.identity.bytes.toString(), '{"render":2}')
  t.not(fresh.identity.etag, first.identity.etag)
  // A request that read the page before the change renders what it saw, and keeps none of it.
  const stale = await cache.document(found!, 'badge', render)
  t.equal(stale.identity.bytes.toString(), '{"render":3}')
  const current = (await cache.bySlug('cached'))!
  t.equal(cache.renderedOf(current, 'summary'), fresh, 'the newer revision is kept')
  t.equal(cache.renderedOf(found!, 'badge'), undefined)

  // A document of a time period replaces the one of the period before.
  await cache.document((await cache.bySlug('cached'))!, 'uptime@10:00', render)
  await cache.document((await cache.bySlug('cached'))!, 'uptime@10:01', render)
  t.equal(renders, 5)
})

t.test('unpublishing is noticed, and a change made here is seen at once', async (t) => {
  await db.updateTable('divinux.statusPages').set({ published: false }).where('id', '=', page.id).execute()
  t.ok(await cache.bySlug('cached'), 'still trusted within its second')
  cache.forget(page.id)
  t.equal(await cache.bySlug('cached'), null)
  await db.updateTable('divinux.statusPages').set({ published: true }).where('id', '=', page.id).execute()
  t.equal(await cache.bySlug('cached'), null, 'a miss is remembered for its second too')
  clock += FRESH_FOR_MS
  t.ok(await cache.bySlug('cached'))
})

t.test('slugs and hosts with no page are remembered up to a bound', async (t) => {
  let found = 0
  for (let index = 0; index < MISSES_KEPT + 200; index++) if (await cache.byDomain(`made-up-${index}.example`)) found += 1
  t.equal(found, 0)
  t.ok(cache.remembered <= MISSES_KEPT + 2, `${cache.remembered} remembered`)
})

t.test('what is remembered is answered without the database, and nothing else', async (t) => {
  const fresh = createPublicCache(db, () => clock)
  t.equal(fresh.rememberedSlug('cached'), undefined, 'never asked: the database must be')
  const found = await fresh.bySlug('cached')
  t.equal(fresh.rememberedSlug('cached'), found)
  t.equal(fresh.renderedOf(found!, 'summary'), undefined, 'not rendered yet')
  const rendered = await fresh.document(found!, 'summary', render)
  t.equal(fresh.renderedOf(found!, 'summary'), rendered)

  t.equal(await fresh.byDomain('nowhere.example'), null)
  t.equal(fresh.rememberedDomain('nowhere.example'), null, 'a miss is remembered as a miss')
  clock += FRESH_FOR_MS
  t.equal(fresh.rememberedSlug('cached'), undefined, 'after its second, the database is asked again')
  t.equal(fresh.rememberedDomain('nowhere.example'), undefined)
})
