import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import {
  DEFAULT_GRACE_SECONDS,
  runCheck,
  type AttemptResult,
  type BrowserRuntime,
  type HeartbeatRequest,
  type ResultStatus,
} from '@svc/check-runner'
import type { SyntheticsConfig } from '@svc/config'
import { createGroupCommit, type Database, type Executor } from '@svc/db'
import { ensureQueue, type JobQueue } from '@svc/jobs'
import type { OutboundPolicy } from '@svc/outbound'
import { checkById, type CheckRow } from '../queries/checks.js'
import { completeRuns, deleteOldRuns, leaseLocalRuns, markMissedRuns, rollUp, takeDueChecks, type RunResult } from '../queries/runs.js'
import { abandonOrphanedRuns, beat, removeGoneRunners } from '../queries/runners.js'
import { checksLosingRunners } from '../queries/schedule.js'
import { insertScreenshots, screenshotsOf } from '../queries/screenshots.js'
import { runnableCheck, type RunnableFields } from '../secrets/resolve.js'
import type { SecretSealer } from '@svc/config'
import { judgeCheck, judgeChecks } from './state.js'

export const MAINTENANCE_QUEUE = 'synthetics.maintenance'
export const ROLLUP_QUEUE = 'synthetics.rollup'
/** The roll-up job: the hourly one names no moment and rolls up the hours before now; a test names its hour. */
export interface RollupJob {
  at?: string
}
/** The queues of the scheduling before migration 0059 (one job per due time, one per run): removed at start. */
const FORMER_QUEUES = ['synthetics.due', 'synthetics.run']

/** A local run may take the longest run there is: a 30 s timeout tried 6 times, and margin. */
const LEASE_SECONDS = 240
/**
 * A runner looks for checks LOOK_AHEAD_MS before the next one falls due, but at most every
 * TICK_MS and at least every IDLE_TICK_MS (runs given back by a runner whose lease ran out are
 * leased within it). A look takes the checks due within LOOK_AHEAD_MS and starts each run at its
 * due time, so a busy runner takes a second's checks in one statement and still starts each on
 * time; the look ahead exceeds the tick so that a look a little late still finds its checks
 * before they fall due. Checks created, resumed or moved by any replica wake every runner through
 * due notices (migration 0080; decision 0032).
 */
const TICK_MS = 1_000
const LOOK_AHEAD_MS = 1_250
const IDLE_TICK_MS = 5_000
/**
 * A result waits at most this long to be recorded with those of the other local runs under way,
 * so that a busy runner records a second's results in one transaction; the last run under way
 * records what has ended at once (decision 0032, "Recording runs").
 */
const RECORD_WITHIN_MS = 1_000
/** What migration 0080's trigger calls the checks' due times on the due notices' channel. */
const CHECKS_DUE = 'synthetics.checks'
/** Due checks taken in one statement; when there were more, the next tick follows at once. */
const TAKE_LIMIT = 500
const RETENTION_BATCH = 5_000
/**
 * Each replica's runner beats this often, and sweeps for runs leased by a runner that stopped
 * beating STALE_SECONDS ago: a run held by a replica that died is recorded missed within half a
 * minute, not run again, since it may have reached its target (decision 0016, "Runners that die").
 */
const BEAT_MS = 5_000
const STALE_SECONDS = 20
/** On stop, runs under way get this long to record their results; the rest are taken again by the sweep. */
const STOP_GRACE_MS = 10_000
/**
 * A runner holds at most this many times its concurrency in local runs: at most its concurrency
 * under way, the rest waiting for their due time (taken ahead) or for a slot. Runs waiting for
 * their due time must not count against the concurrency, which bounds requests in flight: at 166
 * checks a second a look ahead holds some 200 (decision 0032, "Looking ahead").
 */
const HELD_PER_SLOT = 3
/** Local results recorded in one transaction at most. */
const RECORD_BATCH = 100

/** A local run to start: leased just now by a look (carrying its check and due time) or from the queue (due already). */
interface LocalRun {
  id: string
  checkId: string
  check?: RunnableFields
  dueAt?: Date
}

export interface SchedulerOptions {
  database: Database
  jobs: JobQueue
  config: SyntheticsConfig
  policy: OutboundPolicy
  sealer: SecretSealer
  /** This replica's Chromium, when it has one: browser checks of its region run in it. */
  browser: BrowserRuntime | undefined
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
 * Runs checks on time (docs/decisions/0016-synthetics.md, "Scheduling"): shortly before the next
 * check falls due (every TICK_MS at the busiest), each replica's runner takes the checks whose
 * `next_due_at` has come or comes within LOOK_AHEAD_MS, in one statement that moves them on and
 * creates their runs (one per region, unique per due time), with the runs of its own region
 * already leased up to what it may hold; it starts each at its due time, once one of its
 * concurrency's slots is free. Runs queued beyond what it may hold, or given back by a runner
 * whose lease ran out, are leased at the next tick. Relays
 * lease the runs of their regions over HTTP. A minute's maintenance job (pg-boss cron) marks runs
 * nobody took as missed and removes raw results past retention; an hourly one rolls results up.
 * The check row is the schedule: no job per due time or per run, so a run writes three rows.
 */
export function createScheduler(options: SchedulerOptions) {
  const { database, jobs, config, policy, sealer, browser, log } = options
  const db = database.db
  const runnerId = randomUUID()
  const region = config.region
  let beating: NodeJS.Timeout | undefined
  const ticker: {
    timer?: NodeJS.Timeout
    /** When the timer fires (epoch ms). */
    wakeAt: number
    tick?: Promise<void>
    again: boolean
    stopped: boolean
    nextDueAt: number | undefined
    /** A due time announced while a look was under way: the sleep after it ends by then. */
    announced: number | undefined
  } = { wakeAt: 0, again: false, stopped: true, nextDueAt: undefined, announced: undefined }
  let stopHearing: (() => void) | undefined
  /** The last look found the runner holding all it may: a run that ends makes room for the runs queued meanwhile. */
  let slotsWereFull = false
  /** Local runs taken and not yet ended: waiting for their due time or a slot, or under way. */
  const held = new Set<Promise<unknown>>()
  /** Attempts under way (at most the concurrency), and the runs due that wait for one to end. */
  let running = 0
  const waitingForSlot: Array<() => void> = []
  /** Every local run until its result is recorded: what stopping waits for. */
  const underWay = new Set<Promise<void>>()
  /** Runs taken ahead, waiting for their due times: stopping starts them at once. */
  const waiting = new Set<() => void>()
  /** Results of runs that ended, to be recorded together, and how each one's caller learns it was. */
  const ended: Array<{ result: RunResult; recorded: (written: Promise<boolean>) => void }> = []
  let recordTimer: NodeJS.Timeout | undefined

  /**
   * Records results in the caller's transaction and judges their checks again; answers the runs
   * recorded (a run recorded already, or missed meanwhile, is not).
   */
  async function recordResults(trx: Executor, results: readonly RunResult[]): Promise<Set<string>> {
    const locked = await completeRuns(trx, results)
    const recorded = new Map(locked.flatMap((check) => check.runIds.map((runId) => [runId, check.organizationId])))
    await insertScreenshots(trx, screenshotsOf(results, recorded))
    await judgeChecks(trx, jobs, locked, region)
    return new Set(recorded.keys())
  }

  async function record(trx: Executor, runId: string, result: { status: ResultStatus; attempts: AttemptResult[]; resultId?: string }) {
    return (await recordResults(trx, [{ runId, ...result }])).has(runId)
  }

  /**
   * Local results handed in together are recorded together, in one transaction of four statements
   * however many they are; so are those that end while a batch is being written (decision 0032,
   * "Recording runs").
   */
  const localResults = createGroupCommit<RunResult, boolean>({
    writeBatch: async (batch) => {
      const recorded = await db.transaction().execute((trx) => recordResults(trx, batch))
      return batch.map((result) => recorded.has(result.runId))
    },
    writeOne: (result) => db.transaction().execute((trx) => record(trx, result.runId, result)),
    maxBatch: RECORD_BATCH,
  })

  /** Records the results that have ended, together. */
  function recordEnded(): void {
    clearTimeout(recordTimer)
    recordTimer = undefined
    const batch = ended.splice(0)
    if (batch.length === 0) return
    const written = localResults.writeAll(batch.map((entry) => entry.result))
    batch.forEach((entry, index) => entry.recorded(written[index]!))
  }

  /**
   * Answers once a run's result is recorded: at once when no other local run is held (or the
   * runner is stopping), otherwise with the results of the runs that end within RECORD_WITHIN_MS.
   */
  function recordResult(result: RunResult): Promise<boolean> {
    const recorded = new Promise<boolean>((resolve) => ended.push({ result, recorded: resolve }))
    if (held.size === 0 || ticker.stopped) recordEnded()
    else recordTimer ??= setTimeout(recordEnded, RECORD_WITHIN_MS)
    return recorded
  }

  /** Resolves at `dueAt` (at once when it has come), or when the runner stops. */
  function dueTime(dueAt: Date | undefined): Promise<void> {
    // A millisecond more: timers keep the loop's clock, which may be a millisecond behind the wall's.
    const wait = dueAt === undefined ? 0 : dueAt.getTime() + 1 - Date.now()
    if (wait <= 0) return Promise.resolve()
    return new Promise((resolve) => {
      const due = () => {
        clearTimeout(timer)
        waiting.delete(due)
        resolve()
      }
      const timer = setTimeout(due, wait)
      waiting.add(due)
    })
  }

  /** Resolves once an attempt may start: at once while fewer than the concurrency are under way. */
  function slotFree(): Promise<void> {
    if (running < config.concurrency) {
      running += 1
      return Promise.resolve()
    }
    return new Promise((resolve) => waitingForSlot.push(resolve))
  }

  /** An attempt ended: its slot goes to the run that waited longest for one. */
  function slotEnded(): void {
    const next = waitingForSlot.shift()
    if (next) next()
    else running -= 1
  }

  /** Runs one leased run of this service's region at its due time, once a slot is free; a run just taken carries its check. */
  async function attempt(run: LocalRun): Promise<RunResult | undefined> {
    await dueTime(run.dueAt)
    await slotFree()
    try {
      const startedAt = new Date()
      const check = run.check ?? (await checkById(db, run.checkId))
      if (!check) return undefined
      let result: { status: ResultStatus; attempts: AttemptResult[] }
      try {
        result = await runCheck(await runnableCheck(db, sealer, check), policy, browser)
      } catch (error) {
        result = failedRun((error as Error).message)
      }
      return { runId: run.id, ...result, startedAt, finishedAt: new Date() }
    } finally {
      slotEnded()
    }
  }

  function start(run: LocalRun): void {
    const attempted = attempt(run)
    held.add(attempted)
    const settled: Promise<void> = attempted
      .finally(() => {
        held.delete(attempted)
        if (slotsWereFull) {
          slotsWereFull = false
          wake()
        }
      })
      .then(async (result) => {
        if (result) await recordResult(result)
      })
      .catch((error: Error) => log.warn({ err: error, runId: run.id }, 'a synthetic run could not be recorded'))
      .finally(() => underWay.delete(settled))
    underWay.add(settled)
  }

  /** One tick: leases waiting local runs, then takes due checks; answers whether more were due than taken, and when the next falls due. */
  async function takeAndStart(): Promise<{ more: boolean; nextDueAt: Date | null }> {
    const free = () => Math.max(0, config.concurrency * HELD_PER_SLOT - held.size)
    const hasBrowser = browser !== undefined
    if (free() > 0)
      for (const run of await leaseLocalRuns(db, { region, runnerId, leaseSeconds: LEASE_SECONDS, limit: free(), browser: hasBrowser }))
        start(run)
    const taken = await db.transaction().execute(async (trx) => {
      const due = await takeDueChecks(trx, {
        region,
        runnerId,
        leaseSeconds: LEASE_SECONDS,
        localSlots: free(),
        limit: TAKE_LIMIT,
        browser: hasBrowser,
        aheadMs: LOOK_AHEAD_MS,
      })
      // A heartbeat's run is judged from its pings, at once and in the same transaction.
      for (const run of due.runs.filter((taken) => taken.kind === 'heartbeat')) {
        const check = await checkById(trx, run.checkId)
        if (check) await record(trx, run.id, heartbeatResult(check, run.dueAt))
      }
      return due
    })
    for (const run of taken.runs) if (run.state === 'leased') start(run)
    slotsWereFull = free() === 0
    return { more: taken.checks === TAKE_LIMIT, nextDueAt: taken.nextDueAt }
  }

  /** How long to sleep after a look: until LOOK_AHEAD_MS before the next due time, within TICK_MS and IDLE_TICK_MS. */
  function pause(): number {
    if (ticker.again) return 0
    const untilLook = ticker.nextDueAt === undefined ? IDLE_TICK_MS : ticker.nextDueAt - LOOK_AHEAD_MS - Date.now()
    return Math.min(IDLE_TICK_MS, Math.max(TICK_MS, untilLook))
  }

  function sleep(ms: number): void {
    clearTimeout(ticker.timer)
    ticker.wakeAt = Date.now() + ms
    ticker.timer = setTimeout(wake, ms)
    ticker.timer.unref()
  }

  /** A statement created, resumed or moved checks (here or on another replica): look in time for their due time. */
  function dueAnnounced(name: string, dueAt: number): void {
    if (name !== CHECKS_DUE || ticker.stopped) return
    const lookAt = dueAt - LOOK_AHEAD_MS
    if (ticker.tick) ticker.announced = Math.min(ticker.announced ?? dueAt, dueAt)
    else if (lookAt < ticker.wakeAt) sleep(Math.max(0, lookAt - Date.now()))
  }

  /** Ticks now (a check was created or resumed), or right after the tick under way. */
  function wake(): void {
    if (ticker.stopped) return
    if (ticker.tick) {
      ticker.again = true
      return
    }
    clearTimeout(ticker.timer)
    ticker.tick = takeAndStart()
      .then(({ more, nextDueAt }) => {
        const announced = ticker.announced ?? Infinity
        // Checks announced during the look that fall due within the look ahead: another look now, not a tick later.
        ticker.again ||= more || announced - LOOK_AHEAD_MS <= Date.now()
        ticker.nextDueAt = Math.min(nextDueAt?.getTime() ?? Infinity, announced)
        if (ticker.nextDueAt === Infinity) ticker.nextDueAt = undefined
      })
      .catch((error: Error) => log.warn({ err: error }, 'synthetics scheduling failed'))
      .finally(() => {
        ticker.tick = undefined
        ticker.announced = undefined
        if (ticker.stopped) return
        sleep(pause())
        ticker.again = false
      })
  }

  /** This runner is alive; runs of runners that are not are recorded missed (they may have reached their targets). */
  async function beatAndSweep(): Promise<void> {
    await beat(db, runnerId, region)
    const orphaned = await abandonOrphanedRuns(db, STALE_SECONDS)
    if (orphaned.length > 0) log.warn({ runs: orphaned.length }, 'runs held by a runner that stopped are recorded missed, not run again')
  }

  async function maintain(): Promise<void> {
    await removeGoneRunners(db)
    const missed = await markMissedRuns(db)
    for (const checkId of await checksLosingRunners(db, region))
      await db.transaction().execute((trx) => judgeCheck(trx, jobs, checkId, region))
    const before = new Date(Date.now() - config.retentionDays * 86_400_000)
    let removed = 0
    for (let batch = await deleteOldRuns(db, before, RETENTION_BATCH); batch > 0; batch = await deleteOldRuns(db, before, RETENTION_BATCH))
      removed += batch
    if (missed || removed) log.info({ missed, removed }, 'synthetics maintenance')
  }

  /** Rolls up the last two complete hours (a late result is counted again) and, after midnight, yesterday. */
  async function rollUpRecent(now = new Date()): Promise<void> {
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000)
    await rollUp(db, 'hour', new Date(hour.getTime() - 2 * 3_600_000), hour)
    const day = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000)
    await rollUp(db, 'day', new Date(day.getTime() - 86_400_000), day)
  }

  return {
    record,
    recordResults,
    rollUpRecent,
    wake,
    async start(): Promise<void> {
      // Jobs of the former scheduling would only be taken by a replica of before; every due time
      // they stood for is in `next_due_at`, and every run they stood for is a queued or leased row.
      for (const queue of FORMER_QUEUES) await jobs.deleteQueue(queue)
      await ensureQueue(jobs, MAINTENANCE_QUEUE, { retryLimit: 0, expireInSeconds: 300 })
      await ensureQueue(jobs, ROLLUP_QUEUE, { retryLimit: 2, expireInSeconds: 900 })
      await jobs.work(MAINTENANCE_QUEUE, { pollingIntervalSeconds: 2 }, () => maintain())
      await jobs.work<RollupJob>(ROLLUP_QUEUE, { pollingIntervalSeconds: 2 }, ([job]) =>
        rollUpRecent(job?.data?.at ? new Date(job.data.at) : undefined),
      )
      await jobs.schedule(MAINTENANCE_QUEUE, '* * * * *')
      await jobs.schedule(ROLLUP_QUEUE, '5 * * * *')
      await beatAndSweep()
      beating = setInterval(() => {
        beatAndSweep().catch((error: Error) => log.warn({ err: error }, 'synthetics runner heartbeat failed'))
      }, BEAT_MS)
      beating.unref()
      ticker.stopped = false
      stopHearing = database.dueNotices.subscribe(dueAnnounced, wake)
      wake()
      log.debug({ region }, 'synthetics scheduler started')
    },
    async stop(): Promise<void> {
      clearInterval(beating)
      stopHearing?.()
      ticker.stopped = true
      clearTimeout(ticker.timer)
      await ticker.tick
      // Runs taken ahead start now, up to LOOK_AHEAD_MS early, rather than be left to the sweep;
      // results that ended are recorded now, and those ending from now on at once.
      for (const startNow of waiting) startNow()
      recordEnded()
      for (const queue of [MAINTENANCE_QUEUE, ROLLUP_QUEUE]) await jobs.offWork(queue)
      // The runner's row stays: a run still under way after the grace is taken again once the row
      // is stale, and one that finished is done; a day later the row goes.
      const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())
      await Promise.race([Promise.allSettled(underWay), grace])
    },
  }
}

export type Scheduler = ReturnType<typeof createScheduler>
