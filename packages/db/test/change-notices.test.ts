import t from 'tap'
import { sql } from 'kysely'
import pg from 'pg'
import { ChangeNotices, keptAnswers, openDatabase, type Database } from '@svc/db'
import { createTestDatabase, embeddedSnapshot, testServerUrl, until, type TestContext } from '@svc/testkit'

// Migration 0060's triggers announce each write to the announced tables; every connection of
// the process listens, so the writer's own change is heard before its statement returns
// (decision 0029). Run on the embedded database, and on PostgreSQL in its pass.

async function open(t: TestContext): Promise<{ database: Database; url: string | undefined }> {
  const url = await createTestDatabase(t)
  const database = await openDatabase(url ? { databaseUrl: url, poolSize: 3 } : { seed: await embeddedSnapshot() })
  t.teardown(() => database.close())
  // PostgreSQL's listener connects in the background.
  await until('change notices to be live', () => database.changes.live)
  return { database, url }
}

async function newOrganization(database: Database, slug: string): Promise<string> {
  const { id } = await database.db.insertInto('core.organizations').values({ name: slug, slug }).returning('id').executeTakeFirstOrThrow()
  return id
}

t.test('a write is heard before its statement returns, about its organization only', async (t) => {
  const { database } = await open(t)
  const { db, changes } = database
  const first = await newOrganization(database, 'notices-first')
  const second = await newOrganization(database, 'notices-second')
  const stamp = changes.stamp()
  t.ok(changes.unchangedSince('access', first, stamp))

  await db.updateTable('core.organizations').set({ name: 'renamed' }).where('id', '=', first).execute()
  t.notOk(changes.unchangedSince('access', first, stamp), 'the renamed organization changed')
  t.ok(changes.unchangedSince('access', second, stamp), 'the other did not')
  t.ok(changes.unchangedSince('alerts', first, stamp), 'nor did its alerts')
  t.ok(changes.unchangedSince('access', first, changes.stamp()), 'a stamp taken after the change is good')
})

t.test("a transaction's changes are heard when it commits, and never when it rolls back", async (t) => {
  const { database } = await open(t)
  const { db, changes } = database
  const organization = await newOrganization(database, 'notices-transaction')
  const stamp = changes.stamp()
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('core.orgProductRoles')
      .values({ organizationId: organization, memberId: await member(trx), product: 'alerting', role: 'viewer' })
      .execute()
    t.ok(changes.unchangedSince('access', organization, stamp), 'not before the commit: another reader cannot see it yet')
  })
  t.notOk(changes.unchangedSince('access', organization, stamp), 'heard once committed')

  const after = changes.stamp()
  await db
    .transaction()
    .execute(async (trx) => {
      await trx.deleteFrom('core.orgProductRoles').where('organizationId', '=', organization).execute()
      throw new Error('roll back')
    })
    .catch(() => undefined)
  t.ok(changes.unchangedSince('access', organization, after), 'a rolled-back change is no change')

  async function member(executor: typeof db): Promise<string> {
    const { id: userId } = await executor
      .insertInto('core.users')
      .values({ email: 'notices@example.com' })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { id } = await executor
      .insertInto('core.organizationMembers')
      .values({ organizationId: organization, userId, role: 'member', joinedAt: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow()
    return id
  }
})

t.test('an organization deleted takes its alerts along, and both are heard of', async (t) => {
  const { database } = await open(t)
  const { db, changes } = database
  const organization = await newOrganization(database, 'notices-cascade')
  await db
    .insertInto('divinux.alerts')
    .values({ organizationId: organization, source: 'generic', priority: 'P3', title: 'Disk full', fingerprint: 'disk' })
    .execute()
  const stamp = changes.stamp()
  await db.deleteFrom('core.organizations').where('id', '=', organization).execute()
  t.notOk(changes.unchangedSince('alerts', organization, stamp), 'the cascaded delete of its alerts was announced')
  t.notOk(changes.unchangedSince('access', organization, stamp))
})

t.test('emptying a table voids whatever was kept about any organization', async (t) => {
  const { database } = await open(t)
  const { changes } = database
  const organization = await newOrganization(database, 'notices-truncate')
  const stamp = changes.stamp()
  await sql`truncate divinux.alerts cascade`.execute(database.db)
  t.notOk(changes.unchangedSince('alerts', organization, stamp))
  t.notOk(changes.unchangedSince('access', organization, stamp), 'every stamp before it is void')
})

t.test('kept answers are read again after a change, and so is one whose read raced a change', async (t) => {
  const { database } = await open(t)
  const organization = await newOrganization(database, 'notices-kept')
  const names = keptAnswers<{ name: string }>(database.changes, 'access', { max: 10, ttlMs: 60_000 })
  let reads = 0
  const read = async () => {
    reads += 1
    return database.db.selectFrom('core.organizations').select('name').where('id', '=', organization).executeTakeFirstOrThrow()
  }
  t.same(await names.get(organization, 'name', read), { name: 'notices-kept' })
  t.same(await names.get(organization, 'name', read), { name: 'notices-kept' })
  t.equal(reads, 1, 'the second answer was kept')

  await database.db.updateTable('core.organizations').set({ name: 'renamed' }).where('id', '=', organization).execute()
  t.same(await names.get(organization, 'name', read), { name: 'renamed' }, 'read again after the change')
  t.equal(reads, 2)

  // The change lands while the answer is being read: the answer may predate it, so it is read again.
  const racing = async () => {
    const answer = await read()
    await database.db.updateTable('core.organizations').set({ name: 'raced' }).where('id', '=', organization).execute()
    return answer
  }
  await names.get(organization, 'race', racing)
  await names.get(organization, 'race', read)
  t.equal(reads, 4, 'the raced answer was not served again')
})

t.test('notices lapsing void everything kept, and nothing is kept until they resume', async (t) => {
  const changes = new ChangeNotices(true)
  const answers = keptAnswers<string[]>(changes, 'alerts', { max: 10, ttlMs: 60_000 })
  let reads = 0
  const read = async () => [`read ${++reads}`]
  await answers.get('org', 'page 1', read)
  changes.suspend()
  t.same(await answers.get('org', 'page 1', read), ['read 2'], 'not served while notices may be missed')
  t.same(await answers.get('org', 'page 1', read), ['read 3'], 'nor kept')
  changes.resume()
  t.same(await answers.get('org', 'page 1', read), ['read 4'], 'what was kept before the gap stays void')
  t.same(await answers.get('org', 'page 1', read), ['read 4'])
})

t.test('kept answers are bounded by their total size as well as by their number', async (t) => {
  const answers = keptAnswers<string>(new ChangeNotices(true), 'alerts', {
    max: 100,
    ttlMs: 60_000,
    maxSize: 10,
    sizeOf: (page) => page.length,
  })
  let reads = 0
  const read = (body: string) => async () => {
    reads += 1
    return body
  }
  await answers.get('org', 'page 1', read('123456'))
  await answers.get('org', 'page 2', read('abcdef'))
  await answers.get('org', 'page 2', read('abcdef'))
  t.equal(reads, 2, 'the latest is kept')
  await answers.get('org', 'page 1', read('123456'))
  t.equal(reads, 3, 'the first made room for it')
})

t.test('each listening connection hears its own copy of a notice: the copies count once', async (t) => {
  const changes = new ChangeNotices(true)
  changes.receive('alerts:org-1:700')
  const stamp = changes.stamp()
  changes.receive('alerts:org-1:700')
  t.ok(changes.unchangedSince('alerts', 'org-1', stamp), 'a copy heard later voids nothing')
  changes.receive('alerts:org-1:701')
  t.notOk(changes.unchangedSince('alerts', 'org-1', stamp), 'another transaction does')
  t.ok(changes.unchangedSince('alerts', 'org-2', stamp))
  const beforeEmptied = changes.stamp()
  changes.receive('alerts:*:702')
  t.notOk(changes.unchangedSince('alerts', 'org-2', beforeEmptied), 'a table emptied voids every organization')
})

t.test(
  'on PostgreSQL, another process’s change is heard, and a lost listener suspends the cache until it is back',
  { skip: !testServerUrl() && 'PostgreSQL only: the embedded database is one process with one connection' },
  async (t) => {
    const { database, url } = await open(t)
    const { changes } = database
    const organization = await newOrganization(database, 'notices-elsewhere')

    // Another replica: a connection of its own.
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    t.teardown(() => other.end())
    const stamp = changes.stamp()
    await other.query("update core.organizations set name = 'from elsewhere' where id = $1", [organization])
    await until('the other connection’s change to be heard', () => !changes.unchangedSince('access', organization, stamp))

    // Cut every connection of this process but the other's (a failover, a restart).
    await other.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    )
    await until('the listener to notice it lost its connection', () => !changes.live)
    const during = changes.stamp()
    await until('the listener to listen again', () => changes.live, 20_000)
    t.notOk(changes.unchangedSince('access', organization, during), 'a stamp from the gap is void')
    const after = changes.stamp()
    await other.query("update core.organizations set name = 'after the gap' where id = $1", [organization])
    await until('changes to be heard again', () => !changes.unchangedSince('access', organization, after))
  },
)

t.test(
  'behind a pooler in transaction mode, only the listener of DATABASE_LISTEN_URL listens, and changes are heard through it',
  { skip: !testServerUrl() && 'PostgreSQL only: the embedded database is one process with one connection' },
  async (t) => {
    const url = await createTestDatabase(t)
    const database = await openDatabase({ databaseUrl: url, listenUrl: url, poolSize: 2 })
    t.teardown(() => database.close())
    await until('change notices to be live', () => database.changes.live)
    const { rows } = await sql<{ channel: string }>`select pg_listening_channels() as channel`.execute(database.db)
    t.same(rows, [], "a pooled connection's LISTEN would not be its own behind such a pooler")
    const organization = await newOrganization(database, 'notices-listen-url')
    const stamp = database.changes.stamp()
    await database.db.updateTable('core.organizations').set({ name: 'renamed' }).where('id', '=', organization).execute()
    await until('the change to be heard through the listener', () => !database.changes.unchangedSince('access', organization, stamp))
  },
)
