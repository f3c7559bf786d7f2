import t from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createJobQueue, createPoller, stopJobQueue, wakeWorkersByCensus } from '@svc/jobs'
import { createTestDatabase, until } from '@svc/testkit'

// Workers woken by the census (decision 0033), on both engines. Every timer here is a quarter of
// an hour or longer: a job is fetched only because a census the test asks for (`look`) woke its worker.
const HOUR_MS = 3_600_000

const database = await openDatabase({ databaseUrl: await createTestDatabase(t) })
t.teardown(() => database.close())
await migrateToLatest(database.db)
/** pg-boss's fetches, by queue: a worker's fetch is the one statement naming its queue first that takes jobs. */
const fetches = new Map<string, number>()
const sql = {
  executeSql(text: string, values?: unknown[]) {
    if (/^\s*WITH next as/.test(text)) fetches.set(String(values?.[0]), (fetches.get(String(values?.[0])) ?? 0) + 1)
    return database.sql.executeSql(text, values)
  },
}
const jobs = createJobQueue({ sql, supervise: false, onError: (error) => t.fail(`job queue: ${error.message}`) })
/** The census's statements, one a look, and the parameters each was run with. */
const looks: string[] = []
const parameters: unknown[][] = []
const census = wakeWorkersByCensus(jobs, {
  prepared: (text, values) => {
    looks.push(text)
    parameters.push([...values])
    return database.prepared(text, values)
  },
  onError: (error) => t.fail(`census: ${error.message}`),
  intervalMs: HOUR_MS / 4,
  restingIntervalMs: HOUR_MS,
  restingPollSeconds: HOUR_MS / 1000,
})
await jobs.start()
t.teardown(() => stopJobQueue(jobs))
for (const queue of ['census.a', 'census.b']) await jobs.createQueue(queue)

/** A worker on `queue` that records the jobs it takes, and how many fetches found some. */
async function recordingWorker(queue: string) {
  const taken: string[] = []
  const batches: number[] = []
  await jobs.work<{ name: string }>(queue, { batchSize: 10, pollingIntervalSeconds: 0.5 }, async (batch) => {
    batches.push(batch.length)
    for (const job of batch) taken.push(job.data.name)
  })
  return { taken, batches }
}

const a = await recordingWorker('census.a')
const b = await recordingWorker('census.b')
// Each worker's first fetch, at start, found nothing; from here on it rests for an hour.
await until('both workers to have made their first fetch', async () =>
  fetches.get('census.a') === 1 && fetches.get('census.b') === 1 ? true : undefined,
)

t.test('a job waits for no worker’s poll: the next census wakes its queue’s worker, and only that one', async (t) => {
  await jobs.send('census.a', { name: 'first' })
  await census.look()
  await until('the job to be taken', async () => (a.taken.length === 1 ? true : undefined))
  t.same(a.taken, ['first'])
  t.equal(fetches.get('census.a'), 2, 'one fetch, woken by the census')
  t.equal(fetches.get('census.b'), 1, 'the other queue’s worker was not woken')
})

t.test('jobs arrived between two looks are fetched as one batch', async (t) => {
  await jobs.insert([
    { name: 'census.b', data: { name: 'one' } },
    { name: 'census.b', data: { name: 'two' } },
    { name: 'census.b', data: { name: 'three' } },
  ])
  await census.look()
  await until('the jobs to be taken', async () => (b.taken.length === 3 ? true : undefined))
  t.same(b.batches, [3], 'one fetch took all three')
  t.same(b.taken.sort(), ['one', 'three', 'two'])
})

t.test('a job not yet due is left for a census after its start_after', async (t) => {
  await jobs.send('census.a', { name: 'later' }, { startAfter: 3600 })
  await census.look()
  const [row] = await database.prepared<{ state: string }>(
    `select state::text from pgboss.job where name = 'census.a' and data->>'name' = 'later'`,
    [],
  )
  t.equal(row?.state, 'created', 'still waiting: the census saw nothing to fetch')
  t.same(a.taken, ['first'])
})

t.test('a queue worked no more is not woken', async (t) => {
  await jobs.offWork('census.b')
  await jobs.send('census.b', { name: 'unworked' })
  await census.look()
  t.same(b.taken.sort(), ['one', 'three', 'two'], 'nothing more taken')
})

t.test('a worker is woken at most as often as it asked to poll: under load it fetches as it did before', async (t) => {
  await jobs.createQueue('census.c')
  const taken: string[] = []
  await jobs.work<{ name: string }>('census.c', { batchSize: 10, pollingIntervalSeconds: HOUR_MS / 1000 }, async (batch) => {
    for (const job of batch) taken.push(job.data.name)
  })
  await until('the worker’s first fetch', async () => (fetches.get('census.c') === 1 ? true : undefined))
  await jobs.send('census.c', { name: 'woken' })
  await census.look()
  await until('the job to be taken', async () => (taken.length === 1 ? true : undefined))
  await jobs.send('census.c', { name: 'within the hour' })
  await census.look()
  t.equal(fetches.get('census.c'), 2, 'the second look, within the worker’s hour, did not wake it')
  t.same(taken, ['woken'])
})

t.test(
  'a poller whose work a table watch looks for rests until a look finds it: one statement asks for the queues and the tables',
  async (t) => {
    await database.db.schema.createTable('census_work').addColumn('id', 'integer').execute()
    t.teardown(() => database.db.schema.dropTable('census_work').execute())
    const rounds: string[] = []
    let nothingFound = 0
    const poller = createPoller({
      intervalMs: HOUR_MS,
      log: { error: (entry: unknown) => t.fail(`poller: ${JSON.stringify(entry)}`) } as never,
      what: 'working the table',
      round: async () => {
        rounds.push('round')
        return { more: false }
      },
      watched: { jobs, condition: 'exists (select 1 from census_work)', none: () => nothingFound++ },
    })
    poller.start()
    t.teardown(() => poller.stop())
    await until('the first round, at start', async () => (rounds.length === 1 ? true : undefined))

    looks.length = 0
    await census.look()
    t.equal(rounds.length, 1, 'an empty table wakes nobody')
    t.equal(nothingFound, 1, 'and the poller hears that the look found nothing')
    await database.db
      .insertInto('census_work' as never)
      .values({ id: 1 } as never)
      .execute()
    await census.look()
    await until('the round the look woke', async () => (rounds.length === 2 ? true : undefined))
    await census.look()
    t.equal(
      rounds.length,
      2,
      'a look within the poller’s interval does not wake it again: work it cannot take yet costs no more than its polling did',
    )
    t.equal(looks.length, 3, 'one statement a look')
    t.match(looks[0], /pgboss\.job[\s\S]*census_work/, 'the queues and the table in the same statement')

    await poller.stop()
    await census.look()
    t.notMatch(looks.at(-1), /census_work/, 'a stopped poller is looked for no more')
  },
)

t.test(
  'at rest the census looks less often: each look that finds nothing doubles the wait, up to its resting interval; work brings it back',
  async (t) => {
    // A job waiting for a worker the census may not wake yet is work found: the test before left one.
    await jobs.offWork('census.c')
    await census.look()
    await census.look()
    t.equal(census.waitMs, HOUR_MS, 'at rest: its resting interval')
    await jobs.createQueue('census.d')
    await jobs.work('census.d', { pollingIntervalSeconds: HOUR_MS / 1000 }, async () => undefined)
    await jobs.send('census.d', { name: 'work' })
    await census.look()
    t.equal(census.waitMs, HOUR_MS / 4, 'a look that found work: its interval again')
    await until('the job to be taken', async () => {
      const [row] = await database.prepared<{ state: string }>(`select state::text from pgboss.job where name = 'census.d'`, [])
      return row?.state === 'completed' ? true : undefined
    })
    await census.look()
    t.equal(census.waitMs, HOUR_MS / 2, 'the next that found nothing: twice as long')
    await census.look()
    t.equal(census.waitMs, HOUR_MS, 'and up to its resting interval')
  },
)

t.test('the census’s statement names the queues worked here and has no parameters, so a connection plans it once', async (t) => {
  await census.look()
  t.same(parameters.at(-1), [], 'no parameters: PostgreSQL keeps the one plan it made')
  t.match(looks.at(-1), /'census\.a'/, 'a queue worked since the start')
  t.match(looks.at(-1), /'census\.d'/, 'a queue worked since an earlier look')
  t.notMatch(looks.at(-1), /'census\.b'/, 'a queue worked no more is left out')
})
