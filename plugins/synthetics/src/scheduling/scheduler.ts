import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type PgBoss from 'pg-boss'
import { DEFAULT_GRACE_SECONDS, runCheck, type AttemptResult, type HeartbeatRequest, type ResultStatus } from '@svc/check-runner'
import type { SyntheticsConfig } from '@svc/config'
import type { Database, Executor } from '@svc/db'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import type { OutboundPolicy } from '@svc/outbound'
import { checkById, type CheckRow } from '../queries/checks.js'
import { advanceDueChecks, completeRun, deleteOldRuns, leaseLocalRun, markMissedRuns, rollUp, type Advanced } from '../queries/runs.js'
import { beat, removeGoneRunners, requeueOrphanedRuns } from '../queries/runners.js'
import { checksLosingRunners, takeStuckChecks } from '../queries/schedule.js'
import { runnableCheck } from '../secrets/resolve.js'
import type { SecretSealer } from '../secrets/seal.js'
import { judgeCheck } from './state.js'

export const DUE_QUEUE = 'synthetics.due'
export const RUN_QUEUE = 'synthetics.run'
export const MAINTENANCE_QUEUE = 'synthetics.maintenance'
export const ROLLUP_QUEUE = 'synthetics.rollup'

interface DueJob {
  checkId: string
  /** The due time the job was queued for (ISO 8601): the check's `next_due_at` when queued. */
  dueAt: string
}

interface RunJob {
  runId: string
}

/** A run's job may take the longest run there is: a 30 s timeout tried 6 times, and margin. */
const RUN_EXPIRY_SECONDS = 240
const RETENTION_BATCH = 5_000
/**
 * Each replica's runner beats this often, and sweeps for runs leased by a runner that stopped
 * beating STALE_SECONDS ago: a run held by a replica that died runs again within half a minute,
 * not after its 240 s lease (decision 0016, "Runners that die").
 */
const BEAT_MS = 5_000
const STALE_SECONDS = 20

export interface SchedulerOptions {
  database: Database
  jobs: JobQueue
  config: SyntheticsConfig
  policy: OutboundPolicy
  sealer: SecretSealer
  log: FastifyBaseLogger
}

/** What a run that could not start records: one failing attempt saying why. */
export function failedRun(error: string): { status: ResultStatus; attempts: AttemptResult[] } {
  return {
    status: 'failing',
    attempts: [{ status: 'failing', startedAt: new Date().toISOString(), timings: { total: 0 }, assertions: [], error }],
  }
}

/** A heartbeat check is passing at its due time when a ping came within its period and grace. */
export function heartbeatResult(check: Pick<CheckRow, 'request' | 'frequencySeconds' | 'lastPingAt'>, dueAt: Date) {
  const grace = (check.request as HeartbeatRequest).graceSeconds ?? DEFAULT_GRACE_SECONDS
  const since = dueAt.getTime() - (check.frequencySeconds + grace) * 1000
  const pinged = check.lastPingAt !== null && check.lastPingAt.getTime() > since
  const error = pinged ? undefined : check.lastPingAt ? `no ping since ${check.lastPingAt.toISOString()}` : 'no ping yet'
  const attempt: AttemptResult = {
    status: pinged ? 'passing' : 'failing',
    startedAt: dueAt.toISOString(),
    timings: { total: 0 },
    assertions: [],
    ...(error ? { error } : {}),
  }
  return { status: attempt.status, attempts: [attempt] }
}

/**
 * Runs checks on time with pg-boss, no timers of our own (docs/decisions/0016-synthetics.md):
 * each check has one pending `synthetics.due` job for its next due time. Taking it creates the
 * check's runs (one per region, unique per due time), queues the next due job and, for this
 * service's own region, a `synthetics.run` job, all in one transaction. Relays lease the runs
 * of their regions over HTTP. A minute's maintenance job marks runs nobody took as missed,
 * requeues a check whose chain of due jobs broke, and removes raw results past retention; an
 * hourly one rolls results up.
 */
export function createScheduler(options: SchedulerOptions) {
  const { database, jobs, config, policy, sealer, log } = options
  const db = database.db
  const runnerId = randomUUID()
  let beating: NodeJS.Timeout | undefined

  /** Queues a check's next due job in the caller's transaction. */
  async function schedule(trx: Executor, checkId: string, dueAt: Date): Promise<void> {
    await jobs.send(DUE_QUEUE, { checkId, dueAt: dueAt.toISOString() } satisfies DueJob, {
      db: inTransaction(trx),
      startAfter: dueAt,
      retryLimit: 5,
      retryDelay: 1,
    })
  }

  async function record(trx: Executor, runId: string, result: { status: ResultStatus; attempts: AttemptResult[]; resultId?: string }) {
    const done = await completeRun(trx, runId, result)
    if (done) await judgeCheck(trx, jobs, done.checkId, config.region)
    return done !== undefined
  }

  /** Takes a batch of due jobs in one transaction: runs, the next due jobs, local run jobs, heartbeat verdicts. */
  async function takeDue(batch: Array<PgBoss.Job<DueJob>>): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const advanced = await advanceDueChecks(
        trx,
        batch.map((job) => job.data),
      )
      const inserts: PgBoss.JobInsert[] = []
      const heartbeats: Advanced[] = []
      for (const check of advanced) {
        inserts.push({
          name: DUE_QUEUE,
          data: { checkId: check.checkId, dueAt: check.nextDueAt.toISOString() },
          startAfter: check.nextDueAt,
          retryLimit: 5,
          retryDelay: 1,
        })
        if (check.kind === 'heartbeat') heartbeats.push(check)
        else
          for (const run of check.runs)
            if (run.region === config.region)
              inserts.push({ name: RUN_QUEUE, data: { runId: run.id }, retryLimit: 2, retryDelay: 5, expireInSeconds: RUN_EXPIRY_SECONDS })
      }
      if (inserts.length > 0) await jobs.insert(inserts, { db: inTransaction(trx) })
      for (const due of heartbeats) {
        const check = await checkById(trx, due.checkId)
        for (const run of due.runs) if (check) await record(trx, run.id, heartbeatResult(check, due.dueAt))
      }
    })
  }

  /** Runs one queued run of this service's region, then records it. */
  async function runLocal(job: RunJob): Promise<void> {
    const run = await leaseLocalRun(db, job.runId, RUN_EXPIRY_SECONDS, runnerId)
    if (!run) return
    const check = await checkById(db, run.checkId)
    if (!check) return
    let result: { status: ResultStatus; attempts: AttemptResult[] }
    try {
      result = await runCheck(await runnableCheck(db, sealer, check), policy)
    } catch (error) {
      result = failedRun((error as Error).message)
    }
    await db.transaction().execute((trx) => record(trx, run.id, result))
  }

  /** This runner is alive; runs of runners that are not are queued to run again. */
  async function beatAndSweep(): Promise<void> {
    await beat(db, runnerId, config.region)
    const orphaned = await db.transaction().execute(async (trx) => {
      const ids = await requeueOrphanedRuns(trx, STALE_SECONDS)
      if (ids.length > 0)
        await jobs.insert(
          ids.map((runId) => ({ name: RUN_QUEUE, data: { runId }, retryLimit: 2, retryDelay: 5, expireInSeconds: RUN_EXPIRY_SECONDS })),
          { db: inTransaction(trx) },
        )
      return ids
    })
    if (orphaned.length > 0) log.warn({ runs: orphaned.length }, 'runs held by a runner that stopped are queued again')
  }

  async function maintain(): Promise<void> {
    await removeGoneRunners(db)
    const missed = await markMissedRuns(db)
    const stuck = await db.transaction().execute(async (trx) => {
      const taken = await takeStuckChecks(trx, new Date())
      for (const check of taken) await schedule(trx, check.id, check.nextDueAt)
      return taken
    })
    for (const checkId of await checksLosingRunners(db, config.region))
      await db.transaction().execute((trx) => judgeCheck(trx, jobs, checkId, config.region))
    const before = new Date(Date.now() - config.retentionDays * 86_400_000)
    let removed = 0
    for (let batch = await deleteOldRuns(db, before, RETENTION_BATCH); batch > 0; batch = await deleteOldRuns(db, before, RETENTION_BATCH))
      removed += batch
    if (missed || stuck.length || removed) log.info({ missed, requeued: stuck.length, removed }, 'synthetics maintenance')
  }

  /** Rolls up the last two complete hours (a late result is counted again) and, after midnight, yesterday. */
  async function rollUpRecent(now = new Date()): Promise<void> {
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000)
    await rollUp(db, 'hour', new Date(hour.getTime() - 2 * 3_600_000), hour)
    const day = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000)
    await rollUp(db, 'day', new Date(day.getTime() - 86_400_000), day)
  }

  return {
    schedule,
    record,
    rollUpRecent,
    async start(): Promise<void> {
      await ensureQueue(jobs, DUE_QUEUE, { retryLimit: 5, retryDelay: 1, expireInSeconds: 60 })
      await ensureQueue(jobs, RUN_QUEUE, { retryLimit: 2, retryDelay: 5, expireInSeconds: RUN_EXPIRY_SECONDS })
      await ensureQueue(jobs, MAINTENANCE_QUEUE, { retryLimit: 0, expireInSeconds: 300 })
      await ensureQueue(jobs, ROLLUP_QUEUE, { retryLimit: 2, expireInSeconds: 900 })
      // The due jobs of a moment are taken together; the worker is woken after a full batch.
      const due: { worker?: string } = {}
      due.worker = await jobs.work<DueJob>(DUE_QUEUE, { batchSize: 200, pollingIntervalSeconds: 0.5 }, async (batch) => {
        await takeDue(batch)
        if (batch.length === 200 && due.worker) jobs.notifyWorker(due.worker)
      })
      // Two workers of half the concurrency each: a slow target holds up half, not all.
      const half = Math.max(1, Math.ceil(config.concurrency / 2))
      for (let worker = 0; worker < 2; worker++)
        await workEach<RunJob>(jobs, RUN_QUEUE, { batchSize: half, pollingIntervalSeconds: 0.5 }, (job) => runLocal(job.data))
      await jobs.work(MAINTENANCE_QUEUE, { pollingIntervalSeconds: 2 }, () => maintain())
      await jobs.work(ROLLUP_QUEUE, { pollingIntervalSeconds: 2 }, () => rollUpRecent())
      await jobs.schedule(MAINTENANCE_QUEUE, '* * * * *')
      await jobs.schedule(ROLLUP_QUEUE, '5 * * * *')
      await beatAndSweep()
      beating = setInterval(() => {
        beatAndSweep().catch((error: Error) => log.warn({ err: error }, 'synthetics runner heartbeat failed'))
      }, BEAT_MS)
      beating.unref()
      log.debug({ region: config.region }, 'synthetics scheduler started')
    },
    async stop(): Promise<void> {
      clearInterval(beating)
      // The runner's row stays: a run still under way when the process ends is taken again once
      // the row is stale, and one that finished is done; a day later the row goes.
      for (const queue of [DUE_QUEUE, RUN_QUEUE, MAINTENANCE_QUEUE, ROLLUP_QUEUE]) await jobs.offWork(queue)
    },
  }
}

export type Scheduler = ReturnType<typeof createScheduler>
