import t from 'tap'
import { sql } from 'kysely'
import { DueNotices, openDatabase, type Database } from '@svc/db'
import { createTestDatabase, embeddedSnapshot, until, type TestContext } from '@svc/testkit'

// Migration 0080's triggers announce when synthetic checks fall due, so runners sleep until then
// (decision 0032). Run on the embedded database, and on PostgreSQL in its pass, where the
// listener's own connection hears them.

async function open(t: TestContext): Promise<Database> {
  const url = await createTestDatabase(t)
  const database = await openDatabase(url ? { databaseUrl: url, poolSize: 3 } : { seed: await embeddedSnapshot() })
  t.teardown(() => database.close())
  await until('due notices to be live', () => database.dueNotices.live)
  return database
}

/** Every notice heard from now on, in order. */
function hear(database: Database) {
  const heard: Array<{ name: string; dueAt: number }> = []
  const stop = database.dueNotices.subscribe(
    (name, dueAt) => heard.push({ name, dueAt }),
    () => {},
  )
  return { heard, stop }
}

t.test('checks created, moved or resumed announce their earliest due time when they commit; paused ones do not', async (t) => {
  const database = await open(t)
  const { db } = database
  const { id: organizationId } = await db
    .insertInto('core.organizations')
    .values({ name: 'Due notices', slug: 'due-notices' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const { heard, stop } = hear(database)
  t.teardown(stop)
  const soon = new Date(Date.now() + 60_000)
  const later = new Date(Date.now() + 120_000)
  const check = (name: string, nextDueAt: Date, paused = false) => ({
    organizationId,
    name,
    kind: 'http',
    request: sql`${JSON.stringify({ url: 'https://example.com/' })}::jsonb`,
    frequencySeconds: 60,
    timeoutMs: 5000,
    regions: sql`array['local']::text[]`,
    nextDueAt,
    paused,
  })
  const inserted = await db
    .insertInto('divinux.syntheticChecks')
    .values([check('later', later), check('soon', soon), check('paused', new Date(Date.now() - 1_000), true)] as never)
    .returning(['id', 'name'])
    .execute()
  await until('the insert to be heard', () => heard.length === 1)
  t.same(heard, [{ name: 'synthetics.checks', dueAt: soon.getTime() }], 'one notice for the statement: the earliest unpaused due time')

  // Moved inside a transaction: heard once it commits, not before.
  const paused = inserted.find((row) => row.name === 'paused')!
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('divinux.syntheticChecks').set({ paused: false }).where('id', '=', paused.id).execute()
    t.equal(heard.length, 1, 'nothing heard before the commit')
  })
  await until('the resumption to be heard', () => heard.length === 2)
  t.equal(heard[1]!.name, 'synthetics.checks')
  t.ok(heard[1]!.dueAt < Date.now(), 'the resumed check was due already')

  // A rolled-back change is never heard; pausing announces nothing.
  await db
    .transaction()
    .execute(async (trx) => {
      await trx.updateTable('divinux.syntheticChecks').set({ nextDueAt: new Date() }).where('id', '=', inserted[0]!.id).execute()
      throw new Error('roll back')
    })
    .catch(() => {})
  await db.updateTable('divinux.syntheticChecks').set({ paused: true }).execute()
  await sql`select pg_notify('svc_due', 'marker:0')`.execute(db)
  await until('the marker to be heard', () => heard.some((notice) => notice.name === 'marker'))
  t.same(
    heard.slice(2).map((notice) => notice.name),
    ['marker'],
    'nothing between the resumption and the marker',
  )
})

t.test('a notice names what falls due and when; anything else on the channel is ignored', async (t) => {
  const notices = new DueNotices(true)
  const heard: Array<[string, number]> = []
  let resumed = 0
  const stop = notices.subscribe(
    (name, dueAt) => heard.push([name, dueAt]),
    () => (resumed += 1),
  )
  notices.hear({ channel: 'svc_due', payload: 'synthetics.checks:1700000000000' })
  notices.hear({ channel: 'svc_due', payload: 'queue:with:colons:5' })
  notices.hear({ channel: 'svc_due', payload: 'no time' })
  notices.hear({ channel: 'svc_due', payload: ':5' })
  notices.hear({ channel: 'svc_due', payload: 'synthetics.checks:soon' })
  notices.hear({ channel: 'svc_changes', payload: 'alerts:org:1' })
  notices.hear({ channel: 'svc_due' })
  t.same(heard, [
    ['synthetics.checks', 1_700_000_000_000],
    ['queue:with:colons', 5],
  ])

  notices.suspend()
  t.notOk(notices.live)
  notices.resume()
  t.ok(notices.live)
  t.equal(resumed, 1, 'a listener that listens again makes every subscriber look')
  stop()
  notices.resume()
  notices.hear({ channel: 'svc_due', payload: 'synthetics.checks:1' })
  t.equal(resumed, 1, 'an unsubscribed handler hears nothing more')
  t.equal(heard.length, 2)
})
