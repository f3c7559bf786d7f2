import t from 'tap'
import { containing, escapeLike, openDatabase, migrateToLatest, pageOf, paged } from '@svc/db'
import { createTestDatabase } from '@svc/testkit'

t.test('pageOf turns page and limit into an offset', async (t) => {
  t.same(pageOf({ page: 1, limit: 20 }), { offset: 0, limit: 20 })
  t.same(pageOf({ page: 3, limit: 50 }), { offset: 100, limit: 50 })
})

t.test('LIKE patterns take the text literally', async (t) => {
  t.equal(escapeLike('100%_done\\'), '100\\%\\_done\\\\')
  t.equal(containing('a_b'), '%a\\_b%')
})

t.test('paged reads one page in order and the total of the whole query', async (t) => {
  const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
  t.teardown(() => database.close())
  await migrateToLatest(database.db)
  const { db } = database
  await db
    .insertInto('core.organizations')
    .values(['b', 'a', 'c', 'd', '50%_off', '50 off'].map((name) => ({ name, slug: `paging-${name.replace(/\W/g, '')}-${name.length}` })))
    .execute()
  const base = db.selectFrom('core.organizations').where('slug', 'like', 'paging-%')
  const second = await paged(base, (rows) => rows.select(['name']).orderBy('name').orderBy('id'), pageOf({ page: 2, limit: 2 }))
  t.same(second, { rows: [{ name: 'a' }, { name: 'b' }], total: 6 })
  const empty = await paged(base, (rows) => rows.select(['name']).orderBy('name'), pageOf({ page: 9, limit: 2 }))
  t.same(empty, { rows: [], total: 6 }, 'past the end: no rows, the same total')
  t.same(Object.keys(second.rows[0] ?? {}), ['name'], 'the rows carry only the columns selected')
  const none = await paged(
    base.where('name', '=', 'nobody'),
    (rows) => rows.select(['name']).orderBy('name'),
    pageOf({ page: 1, limit: 2 }),
  )
  t.same(none, { rows: [], total: 0 }, 'an empty query: no rows, total 0')
  const last = await paged(base, (rows) => rows.select(['name']).orderBy('name').orderBy('id'), pageOf({ page: 2, limit: 4 }))
  t.same(last, { rows: [{ name: 'c' }, { name: 'd' }], total: 6 }, 'a short last page still carries the total')
  const full = await paged(base, (rows) => rows.select(['name']).orderBy('name').orderBy('id'), pageOf({ page: 1, limit: 6 }))
  t.same(full.total, 6, 'a full page is counted: more may follow')
  const short = await paged(base, (rows) => rows.select(['name']).orderBy('name').orderBy('id'), pageOf({ page: 1, limit: 7 }))
  t.same(short.total, 6, 'a first page that is not full is the whole list')
  const literal = await paged(
    base.where('name', 'like', containing('%_')),
    (rows) => rows.select(['name']).orderBy('name'),
    pageOf({ page: 1, limit: 10 }),
  )
  t.same(literal.rows, [{ name: '50%_off' }], '% and _ match only themselves')
})
