import PgBoss from 'pg-boss'
import { CompiledQuery } from 'kysely'
import type { Executor, SqlExecutor } from '@svc/db'
import { wakeWorkersByCensus, type CensusOptions } from './census.js'

export interface JobQueueOptions {
  /** The application's own connections: pg-boss shares the pool (PostgreSQL) or the PGlite handle. */
  sql: SqlExecutor
  /** Log sink for errors pg-boss raises in the background (maintenance, polling). */
  onError: (error: Error) => void
  /** Background maintenance and cron scheduling; tests that only send and work can turn it off. */
  supervise?: boolean
  /**
   * Given, workers fetch when a census finds work for their queues, and otherwise rest
   * (census.ts, decision 0033); without it each polls its queue on its own interval.
   */
  census?: Pick<CensusOptions, 'prepared' | 'intervalMs'>
}

/**
 * pg-boss 10's queue creation (`createQueue`, plans.js), one statement: its function inserts the
 * queue's row, then adds a foreign key to that table from the queue's new partition. Two processes
 * creating queues at once each hold the row they inserted and wait for the other's table lock:
 * PostgreSQL ends one with a deadlock (40P01), and a replica starting beside another exited
 * (issue 51). The same statement run after a transaction-scoped advisory lock makes creations
 * wait for each other instead; the lock is released when the statement's transaction ends, so it
 * works on any pooled connection and on PGlite. `packages/jobs/test/queue.test.ts` fails if
 * pg-boss ever words the statement differently.
 */
export const CREATE_QUEUE_STATEMENT = 'SELECT pgboss.create_queue($1, $2)'
const CREATE_QUEUE_SERIALIZED = `
  WITH serialized AS (SELECT pg_advisory_xact_lock(hashtextextended('pgboss.create_queue', 0)))
  SELECT pgboss.create_queue($1, $2) FROM serialized`

/**
 * The durable job queue (pg-boss 10, the newest line that runs on Node 20) on the
 * application's database, in schema `pgboss`. Several replicas share it; a job is handed to
 * one worker at a time and kept until completed, so it survives a restart.
 */
export function createJobQueue(options: JobQueueOptions): PgBoss {
  const boss = new PgBoss({
    db: {
      // pg-boss passes `values` only when a statement has parameters; keep that distinction.
      executeSql: (text: string, values?: unknown[]) =>
        options.sql.executeSql(text === CREATE_QUEUE_STATEMENT ? CREATE_QUEUE_SERIALIZED : text, values) as Promise<{ rows: never[] }>,
    },
    schema: 'pgboss',
    supervise: options.supervise ?? true,
    schedule: options.supervise ?? true,
  })
  boss.on('error', options.onError)
  if (options.census) wakeWorkersByCensus(boss, { ...options.census, onError: options.onError })
  return boss
}

/**
 * The readiness check of a started queue: it fails once the queue has stopped, or when its
 * schema cannot be read (the database answers but pg-boss's tables are gone or locked out).
 */
export function jobQueueProbe(boss: PgBoss): () => Promise<void> {
  let stopped = false
  boss.on('stopped', () => (stopped = true))
  return async () => {
    if (stopped) throw new Error('the job queue has stopped')
    if (!(await boss.isInstalled())) throw new Error('the job queue schema is missing')
  }
}

/** Stops fetching, waits for jobs in flight (up to `timeoutMs`), leaves the database open. */
export async function stopJobQueue(boss: PgBoss, timeoutMs = 10_000): Promise<void> {
  await boss.stop({ graceful: true, wait: true, close: false, timeout: timeoutMs })
}

export type JobQueue = PgBoss

export type QueuePolicy = Omit<NonNullable<Parameters<PgBoss['createQueue']>[1]>, 'name'>

/**
 * Creates a queue (idempotent, safe when replicas start together) and applies this release's
 * policy to it: `createQueue` alone leaves an existing queue's retries and expiry as they were.
 */
export async function ensureQueue(boss: PgBoss, name: string, policy: QueuePolicy = {}): Promise<void> {
  await boss.createQueue(name, { ...policy, name })
  await boss.updateQueue(name, { ...policy, name })
}

export interface WorkEachOptions {
  /** Jobs fetched, and handled concurrently, at a time. */
  batchSize: number
  pollingIntervalSeconds: number
}

/**
 * Works a queue a batch at a time, each job handled concurrently and failed on its own when its
 * handler throws (pg-boss retries it after its backoff); the others complete. Written for
 * delivery queues that must keep up with a burst: pg-boss 10's worker handles one batch per
 * polling interval unless notified (src/worker.js waits `interval - duration` even after a full
 * fetch), so a full batch notifies it and the backlog drains without waiting.
 */
export async function workEach<T extends object>(
  boss: PgBoss,
  name: string,
  options: WorkEachOptions,
  handle: (job: PgBoss.JobWithMetadata<T>) => Promise<void>,
): Promise<string> {
  return workBatch<T>(boss, name, options, (jobs) =>
    Promise.all(
      jobs.map((job) =>
        handle(job).then(
          () => undefined,
          (error: unknown) => error as Error,
        ),
      ),
    ),
  )
}

/**
 * `workEach` with one handler for the whole batch, for a queue whose jobs share reads and writes
 * that are cheaper made once for all of them. The handler answers, in the batch's order, each
 * job's error when it failed (pg-boss retries that job alone after its backoff); a handler that
 * throws fails every job of the batch.
 */
export async function workBatch<T extends object>(
  boss: PgBoss,
  name: string,
  options: WorkEachOptions,
  handle: (jobs: Array<PgBoss.JobWithMetadata<T>>) => Promise<Array<Error | undefined>>,
): Promise<string> {
  // The worker may fetch before `work` answers its id.
  const started: { worker?: string } = {}
  started.worker = await boss.work<T>(
    name,
    { batchSize: options.batchSize, pollingIntervalSeconds: options.pollingIntervalSeconds, includeMetadata: true },
    async (jobs) => {
      const errors = await handle(jobs).catch((error: unknown) => jobs.map(() => error as Error))
      await Promise.all(
        jobs.map(async (job, index) => {
          const error = errors[index]
          if (error) await boss.fail(name, job.id, { message: error.message })
        }),
      )
      if (jobs.length === options.batchSize && started.worker) boss.notifyWorker(started.worker)
    },
  )
  return started.worker
}

/** pg-boss's connection option: statements run on the caller's transaction. */
export function inTransaction(executor: Executor) {
  return {
    executeSql: async (text: string, values: unknown[] = []) => executor.executeQuery(CompiledQuery.raw(text, values)),
  }
}

/** Jobs per queue in the states that matter to an operator: waiting (created, retry), running, failed. */
export async function countJobs(sql: SqlExecutor): Promise<Array<{ queue: string; state: string; count: number }>> {
  const result = await sql.executeSql(
    `select name as queue, state::text as state, count(*)::int as count
       from pgboss.job
      where state in ('created', 'retry', 'active', 'failed')
      group by name, state`,
    [],
  )
  return result.rows as Array<{ queue: string; state: string; count: number }>
}
