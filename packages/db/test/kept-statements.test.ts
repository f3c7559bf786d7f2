import t from 'tap'
import { sql } from 'kysely'
import { keptPrepared, openDatabase } from '@svc/db'
import { createTestDatabase } from '@svc/testkit'

// A statement marked `keptPrepared` is a named prepared statement of each PostgreSQL connection
// (kept-statements.ts); PostgreSQL lists a session's in pg_prepared_statements. One connection,
// so that every statement below runs in the session it reads.
const databaseUrl = await createTestDatabase(t, { empty: true })
const database = await openDatabase({ databaseUrl, poolSize: 1 })
t.teardown(() => database.close())
const { db } = database

const squared = (n: number) => sql<{ squared: number }>`${keptPrepared}select ${n}::int * ${n}::int as squared`.execute(db)

/** The kept statements of the session, by name and text. */
async function keptInSession() {
  const { rows } = await sql<{ name: string; statement: string }>`
    select name, statement from pg_prepared_statements where name like 'kept\_%' order by name`.execute(db)
  return rows
}

t.test('a kept statement answers each run with its own values', async (t) => {
  t.same((await squared(3)).rows, [{ squared: 9 }])
  t.same((await squared(4)).rows, [{ squared: 16 }], 'the second run binds its own parameters')
  t.same(
    (await db.transaction().execute((trx) => sql<{ squared: number }>`${keptPrepared}select ${5}::int * ${5}::int as squared`.execute(trx)))
      .rows,
    [{ squared: 25 }],
    'in a transaction too',
  )
})

const onPostgres = { skip: databaseUrl ? false : 'PGlite: the mark is a comment there (its pool keeps every statement parsed)' }

t.test('on PostgreSQL it is prepared once per connection, under a name of its text, in a transaction too', onPostgres, async (t) => {
  await squared(6)
  await squared(7)
  const kept = await keptInSession()
  const squares = kept.filter((row) => row.statement.includes('as squared'))
  t.equal(squares.length, 1, 'one statement for every run of one text')
  t.match(squares[0]!.statement, /^\/\* kept prepared \*\/ select \$1::int \* \$2::int as squared$/)

  await db.transaction().execute((trx) => sql`${keptPrepared}select ${1}::int as inside_a_transaction`.execute(trx))
  t.ok(
    (await keptInSession()).some((row) => row.statement.includes('inside_a_transaction')),
    'a statement of a transaction is kept as well',
  )

  await sql`select ${1}::int as unmarked`.execute(db)
  const { rows } = await sql<{ count: number }>`
    select count(*)::int as count from pg_prepared_statements where statement like '%as unmarked%'`.execute(db)
  t.equal(rows[0]!.count, 0, 'an unmarked statement stays unnamed, planned at each run')
})

t.test('the same text gets the same name on another connection', onPostgres, async (t) => {
  const other = await openDatabase({ databaseUrl, poolSize: 1 })
  t.teardown(() => other.close())
  await sql`${keptPrepared}select ${2}::int * ${2}::int as squared`.execute(other.db)
  const { rows } = await sql<{ name: string }>`
    select name from pg_prepared_statements where statement like '%as squared'`.execute(other.db)
  const ours = (await keptInSession()).filter((row) => row.statement.includes('as squared'))
  t.same(
    rows.map((row) => row.name),
    ours.map((row) => row.name),
  )
})
