import t, { type Test } from 'tap'
import { migrateToLatest, openDatabase } from '@svc/db'
import { createJobQueue, installJobArrivals, RESTING_POLL_SECONDS, stopJobQueue, workEach, type JobQueue } from '@svc/jobs'
import { createTestDatabase } from '@svc/testkit'

const QUEUE = 'arrivals'

/** A started queue whose workers rest between arrivals, on PGlite or the test PostgreSQL server. */
async function restingQueue(t: Test) {
  const databaseUrl = await createTestDatabase(t)
  const database = await openDatabase(databaseUrl ? { databaseUrl } : {})
  await migrateToLatest(database.db)
  const jobs = createJobQueue({ sql: database.sql, arrivals: database.jobArrivals, onError: (error) => t.fail(error.message) })
  await jobs.start()
  await installJobArrivals(database.sql)
  await jobs.createQueue(QUEUE, { name: QUEUE, retryLimit: 1, retryDelay: 1 })
  t.teardown(async () => {
    await stopJobQueue(jobs)
    await database.close()
  })
  return { database, jobs }
}

/**
 * Resolves with each job's name as the worker sees it. A job arriving while the worker rests is
 * seen long before its resting poll, or the wait fails: the difference is what this file tests.
 */
function worker(jobs: JobQueue, handle: (name: string) => void = () => {}) {
  const waiting: Array<(name: string) => void> = []
  const seen: string[] = []
  const ready = workEach<{ name: string }>(jobs, QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async (job) => {
    seen.push(job.data.name)
    waiting.shift()?.(job.data.name)
    handle(job.data.name)
  })
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const late = setTimeout(() => reject(new Error('no job within half the resting poll')), (RESTING_POLL_SECONDS * 1000) / 2)
      waiting.push((name) => {
        clearTimeout(late)
        resolve(name)
      })
    })
  return { ready, next, seen }
}

t.test('a resting worker fetches a job as soon as its transaction commits', async (t) => {
  const { jobs } = await restingQueue(t)
  const working = worker(jobs)
  await working.ready
  // The first job proves the worker has fetched once and now rests.
  const first = working.next()
  await jobs.send(QUEUE, { name: 'first' })
  t.equal(await first, 'first')
  const second = working.next()
  await jobs.send(QUEUE, { name: 'second' })
  t.equal(await second, 'second')
})

t.test('a job due later wakes the worker at its time, not before', async (t) => {
  const { jobs } = await restingQueue(t)
  const working = worker(jobs)
  await working.ready
  const sent = Date.now()
  const later = working.next()
  await jobs.send(QUEUE, { name: 'later' }, { startAfter: 1 })
  t.equal(await later, 'later')
  t.ok(Date.now() - sent >= 900, 'not fetched before its start_after')
})

t.test('a failed job is fetched again after its retry delay, and a job moved forward by an update at once', async (t) => {
  const { database, jobs } = await restingQueue(t)
  let failures = 0
  const working = worker(jobs, (name) => {
    if (name === 'flaky' && failures++ === 0) throw new Error('first attempt fails')
  })
  await working.ready
  const attempts = [working.next(), working.next()]
  await jobs.send(QUEUE, { name: 'flaky' })
  t.same(await Promise.all(attempts), ['flaky', 'flaky'], 'retried after one second, long before the resting poll')

  // Tests and operators move a waiting job's start time with an update: that wakes the worker too.
  const moved = working.next()
  const id = await jobs.send(QUEUE, { name: 'moved' }, { startAfter: 3_600 })
  await database.sql.executeSql(`update pgboss.job set start_after = now() where id = $1`, [id])
  t.equal(await moved, 'moved')
})

t.test('installing the trigger again, or from two replicas at once, is harmless', async (t) => {
  const { database } = await restingQueue(t)
  await Promise.all([installJobArrivals(database.sql), installJobArrivals(database.sql)])
  const triggers = await database.sql.executeSql(
    `select tgname from pg_trigger where tgrelid = 'pgboss.job'::regclass and tgname like 'svc_job_%' order by tgname`,
    [],
  )
  t.same(
    triggers.rows.map((row) => (row as { tgname: string }).tgname),
    ['svc_job_inserts', 'svc_job_updates'],
  )
})
