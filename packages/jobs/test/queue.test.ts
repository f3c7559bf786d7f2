import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { migrateToLatest, openDatabase, type DatabaseOptions } from '@svc/db'
import { CREATE_QUEUE_STATEMENT, createJobQueue, ensureQueue, stopJobQueue, workBatch, workEach, type JobQueue } from '@svc/jobs'
import { createTestDatabase, until } from '@svc/testkit'

const QUEUE = 'greetings'

/** Where the database lives across the "restart": a folder for PGlite, a database for PostgreSQL. */
async function durableDatabase(): Promise<DatabaseOptions> {
  const databaseUrl = await createTestDatabase(t)
  if (databaseUrl) return { databaseUrl }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'jobs-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  return { dataDir }
}

async function startQueue(options: DatabaseOptions) {
  const database = await openDatabase(options)
  await migrateToLatest(database.db)
  const jobs = createJobQueue({ sql: database.sql, onError: (error) => t.fail(`job queue: ${error.message}`) })
  await jobs.start()
  await jobs.createQueue(QUEUE)
  return { database, jobs }
}

/**
 * Resolves once every job of the queue is completed: none is created, retrying or active, so none
 * can be fetched again, and what the workers saw by then is all they will see.
 */
async function nothingLeftToDeliver(jobs: JobQueue): Promise<void> {
  await until('every job to be completed', async () => (await jobs.getQueueSize(QUEUE, { before: 'completed' })) === 0)
}

/** Starts `workers` workers that record what they do; resolves once `count` jobs were seen. */
function workUntil(jobs: JobQueue, seen: string[], count: number, workers = 1): Promise<void> {
  return new Promise((resolve) => {
    for (let worker = 0; worker < workers; worker += 1) {
      void jobs.work<{ name: string }>(QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 3 }, async (batch) => {
        for (const job of batch) seen.push(job.data.name)
        if (seen.length >= count) resolve()
      })
    }
  })
}

t.test('a job sent before a restart is worked exactly once after it', async (t) => {
  const where = await durableDatabase()

  // First life: the job is sent, and the process stops before any worker ran.
  const first = await startQueue(where)
  const jobId = await first.jobs.send(QUEUE, { name: 'ada' })
  t.ok(jobId)
  await stopJobQueue(first.jobs)
  await first.database.close()

  // Second life: a new process, a new queue instance, the same database.
  const second = await startQueue(where)
  const seen: string[] = []
  await workUntil(second.jobs, seen, 1)
  await nothingLeftToDeliver(second.jobs)
  t.same(seen, ['ada'], 'worked once, and no job is left that could be delivered again')
  const job = await second.jobs.getJobById(QUEUE, jobId as string)
  t.equal(job?.state, 'completed')
  await stopJobQueue(second.jobs)
  await second.database.close()
})

t.test('two workers on one queue share the jobs without doing any twice', async (t) => {
  const where = await durableDatabase()
  const { database, jobs } = await startQueue(where)
  t.teardown(async () => {
    await stopJobQueue(jobs)
    await database.close()
  })
  const names = Array.from({ length: 20 }, (_, index) => `job-${index}`)
  for (const name of names) await jobs.send(QUEUE, { name })
  const seen: string[] = []
  await workUntil(jobs, seen, names.length, 2)
  await nothingLeftToDeliver(jobs)
  t.same([...seen].sort(), [...names].sort(), 'each job once, and none is left that could be delivered again')
})

t.test('workEach handles a batch concurrently and retries only the job whose handler threw', async (t) => {
  const { database, jobs } = await startQueue(await durableDatabase())
  t.teardown(async () => {
    await stopJobQueue(jobs)
    await database.close()
  })
  await jobs.createQueue('each', { name: 'each', retryLimit: 1, retryDelay: 0 })
  for (const name of ['ada', 'bo', 'cy', 'dee', 'eve']) await jobs.send('each', { name })
  const tries: string[] = []
  const done = new Promise<void>(
    (resolve) =>
      void workEach<{ name: string }>(jobs, 'each', { batchSize: 2, pollingIntervalSeconds: 0.5 }, async (job) => {
        tries.push(`${job.data.name}#${job.retryCount}`)
        if (job.data.name === 'bo' && job.retryCount === 0) throw new Error('bo fails once')
        if (tries.length === 6) resolve()
      }),
  )
  await done
  t.same(tries.sort(), ['ada#0', 'bo#0', 'bo#1', 'cy#0', 'dee#0', 'eve#0'], 'bo again, nobody else twice')
})

t.test(
  'workBatch hands the handler whole batches; a job it answers an error for is retried alone, a throw retries the batch',
  async (t) => {
    const { database, jobs } = await startQueue(await durableDatabase())
    t.teardown(async () => {
      await stopJobQueue(jobs)
      await database.close()
    })
    await jobs.createQueue('batch', { name: 'batch', retryLimit: 1, retryDelay: 0 })
    const batches: string[][] = []
    const waiting: Array<{ count: number; resolve: () => void }> = []
    const batchesSeen = (count: number) => new Promise<void>((resolve) => waiting.push({ count, resolve }))
    await workBatch<{ name: string }>(jobs, 'batch', { batchSize: 4, pollingIntervalSeconds: 0.5 }, async (batch) => {
      batches.push(batch.map((job) => `${job.data.name}#${job.retryCount}`).sort())
      for (const wait of waiting) if (batches.length >= wait.count) wait.resolve()
      if (batch.some((job) => job.data.name === 'cy' && job.retryCount === 0)) throw new Error('the batch read failed')
      return batch.map((job) => (job.data.name === 'bo' && job.retryCount === 0 ? new Error('bo fails once') : undefined))
    })
    await jobs.insert([
      { name: 'batch', data: { name: 'ada' } },
      { name: 'batch', data: { name: 'bo' } },
    ])
    await batchesSeen(2)
    t.same(batches, [['ada#0', 'bo#0'], ['bo#1']], 'both in one batch, then bo again alone')
    await jobs.insert([
      { name: 'batch', data: { name: 'cy' } },
      { name: 'batch', data: { name: 'dee' } },
    ])
    await batchesSeen(4)
    t.same(
      batches.slice(2),
      [
        ['cy#0', 'dee#0'],
        ['cy#1', 'dee#1'],
      ],
      'a handler that throws has its whole batch retried',
    )
  },
)

t.test('queues created at once by several processes wait for each other instead of deadlocking', async (t) => {
  const options = await durableDatabase()
  const first = await openDatabase(options)
  t.teardown(() => first.close())
  await migrateToLatest(first.db)
  const sent: string[] = []
  const recording = { executeSql: (text: string, values?: unknown[]) => (sent.push(text), first.sql.executeSql(text, values)) }
  const jobs = createJobQueue({ sql: recording, onError: (error) => t.fail(`job queue: ${error.message}`), supervise: false })
  await jobs.start()
  t.teardown(() => stopJobQueue(jobs))
  await ensureQueue(jobs, 'serialized-one')
  t.ok(
    sent.some((text) => text.includes('pg_advisory_xact_lock') && text.includes('create_queue')),
    `pg-boss still creates a queue with ${CREATE_QUEUE_STATEMENT}, which is run after the lock`,
  )
  // Several pools on one PostgreSQL database stand for replicas starting together (the embedded
  // database has one connection, so nothing runs at once there).
  if (!options.databaseUrl) return
  const replicas = await Promise.all(
    [1, 2, 3].map(async () => {
      const database = await openDatabase({ ...options, poolSize: 2 })
      t.teardown(() => database.close())
      const queue = createJobQueue({ sql: database.sql, onError: (error) => t.fail(`job queue: ${error.message}`), supervise: false })
      await queue.start()
      t.teardown(() => stopJobQueue(queue))
      return queue
    }),
  )
  const names = Array.from({ length: 12 }, (_, index) => `together-${index}`)
  await Promise.all(replicas.map((queue) => Promise.all(names.map((name) => ensureQueue(queue, name, { retryLimit: 2 })))))
  const queues = await replicas[0]!.getQueues()
  t.same(
    names.filter((name) => queues.some((queue) => queue.name === name)),
    names,
    'every queue exists once, made by whichever replica came first',
  )
})
