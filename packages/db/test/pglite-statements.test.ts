import t from 'tap'
import { CompiledQuery, sql, type Kysely } from 'kysely'
import { openDatabase, STATEMENTS_KEPT, type DB } from '@svc/db'

// The embedded database parses each statement once and keeps it (pglite-pool.ts); PostgreSQL
// itself lists what a session keeps in pg_prepared_statements. One database for the file, a
// table of its own for each test.
const { db, close } = await openDatabase({})
t.teardown(close)

const KEPT = 'select statement from pg_prepared_statements order by prepare_time'

/** What the session keeps, but for this very query. */
async function kept(): Promise<string[]> {
  const { rows } = await db.executeQuery<{ statement: string }>(CompiledQuery.raw(KEPT))
  return rows.map((row) => row.statement).filter((text) => text !== KEPT)
}

/** A table of notes, and the statements the tests keep on it. */
async function notes(name: string) {
  const table = sql.table(name)
  await sql`create table ${table} (id int primary key, body text not null)`.execute(db)
  return {
    insert: (id: number, body: string, executor: Kysely<DB> = db) =>
      sql`insert into ${table} (id, body) values (${id}, ${body})`.execute(executor),
    body: async (id: number) => (await sql<{ body: string }>`select body from ${table} where id = ${id}`.execute(db)).rows[0]?.body,
    row: async (id: number) => (await sql<Record<string, unknown>>`select * from ${table} where id = ${id}`.execute(db)).rows[0],
    keptOnIt: async (verb: string) => (await kept()).filter((text) => text.startsWith(`${verb} `) && text.includes(`"${name}"`)).length,
  }
}

t.test('a statement run again is bound to what was parsed the first time, not parsed again', async (t) => {
  const table = await notes('parsed_once')
  await table.insert(1, 'first')
  await table.insert(2, 'second')
  t.equal(await table.body(1), 'first')
  t.equal(await table.body(2), 'second', 'each run binds its own parameters')
  t.equal(await table.keptOnIt('insert'), 1, 'the insert is kept once')
  t.equal(await table.keptOnIt('select'), 1, 'the select is kept once')
})

t.test('after a schema change, kept statements are parsed again and see the new columns', async (t) => {
  const table = await notes('schema_change')
  await table.insert(1, 'first')
  t.same(await table.row(1), { id: 1, body: 'first' })
  await sql`alter table schema_change add column pinned boolean not null default false`.execute(db)
  // Kept across the change, PostgreSQL would refuse it: "cached plan must not change result type".
  t.same(await table.row(1), { id: 1, body: 'first', pinned: false })
})

t.test('a statement that fails to parse is not kept, and the next one runs', async (t) => {
  const table = await notes('parse_error')
  const broken = () => sql`selec body from parse_error where id = ${1}`.execute(db)
  await t.rejects(broken(), /syntax error/)
  await t.rejects(broken(), /syntax error/, 'parsed again, not bound to a statement that never was')
  await table.insert(1, 'after the error')
  t.equal(await table.body(1), 'after the error')
  t.notOk(
    (await kept()).some((text) => text.startsWith('selec ')),
    'the broken statement is not kept',
  )
})

t.test('a kept statement that fails when run stays kept and runs again', async (t) => {
  const table = await notes('run_error')
  await table.insert(1, 'one')
  await t.rejects(table.insert(1, 'again'), /duplicate key/)
  await table.insert(2, 'two')
  t.equal(await table.body(2), 'two')
  t.equal(await table.keptOnIt('insert'), 1)
})

t.test('a statement first parsed in a transaction that rolled back is still usable', async (t) => {
  const table = await notes('rolled_back')
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await table.insert(1, 'rolled back', trx)
      await table.insert(1, 'duplicate', trx).catch(() => undefined)
      // The transaction is aborted: nothing runs until it ends.
      await table.insert(2, 'refused', trx)
    }),
    /current transaction is aborted/,
  )
  await table.insert(3, 'after the rollback')
  t.equal(await table.body(3), 'after the rollback')
  t.equal(await table.body(1), undefined, 'the rolled-back insert left nothing')
})

t.test(`at most ${STATEMENTS_KEPT} statements are kept, the least recently used closed first`, async (t) => {
  const table = await notes('evicted')
  await table.insert(1, 'kept')
  // Distinct texts, each kept once: the insert above is now the least recently used.
  for (let index = 0; index < STATEMENTS_KEPT; index += 1) await sql`select ${index}::int as ${sql.ref(`n${index}`)}`.execute(db)
  await sql`select ${1}::int as last`.execute(db)
  const statements = await kept()
  t.ok(statements.length <= STATEMENTS_KEPT, `${statements.length} statements kept`)
  t.equal(await table.keptOnIt('insert'), 0, 'the least recently used statement was closed')
  await table.insert(2, 'parsed again')
  t.equal(await table.body(2), 'parsed again')
})
