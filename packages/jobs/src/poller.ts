import type { FastifyBaseLogger } from 'fastify'
import type PgBoss from 'pg-boss'
import { type Census, censusOf, RESTING_POLL_SECONDS } from './census.js'

export interface PollerOptions {
  /** How often it looks when nobody wakes it; null: only when woken (a helper another poller wakes). */
  intervalMs: number | null
  /** One pass; answers whether there is more to do at once (a full batch). */
  round: () => Promise<{ more: boolean }>
  log: FastifyBaseLogger
  /** What a failed round was doing, for the log line. */
  what: string
  /**
   * Where its work is looked for by the census of `jobs` (census.ts, decision 0033 "Tables"):
   * `condition` is true while there is work to do now. When the queue has a census, a look that
   * finds work wakes the poller (at most once per `intervalMs`), and the poller's own interval is
   * only a safety net of `RESTING_POLL_SECONDS`; `none` hears each look that found none.
   */
  watched?: { jobs: PgBoss; condition: string; none?: () => void }
}

export interface Poller {
  /** Run a round now rather than at the next interval (a round running now runs once more). */
  wake(): void
  start(): void
  stop(): Promise<void>
}

/**
 * A worker for work written to tables (pending escalations, undispatched alert events): rounds run one
 * at a time, when woken by the request that wrote the work, by the census that saw it (written
 * by another replica, or come due), and every interval as a safety net. The rows are claimed
 * `for update skip locked`, so replicas share the work.
 */
export function createPoller({ intervalMs, round, log, what, watched }: PollerOptions): Poller {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let stopped = true
  let unwatch: (() => void) | undefined
  /** The interval between rounds nobody woke: the safety net's when a census looks for the work. */
  let restingMs = intervalMs

  async function rounds(): Promise<void> {
    try {
      do {
        again = false
        if ((await round()).more) again = true
      } while (again && !stopped)
    } catch (error) {
      log.error({ err: error }, `${what} failed; trying again at the next interval`)
    }
  }

  function schedule(delay: number): void {
    if (stopped) return
    timer = setTimeout(() => {
      running = rounds().finally(() => {
        running = undefined
        if (restingMs !== null) schedule(restingMs)
      })
    }, delay)
    timer.unref()
  }

  function wake(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    clearTimeout(timer)
    schedule(0)
  }

  /** Census wakes at most once per interval, as the poller looked before: work it cannot take yet (locked, failing) costs no more. */
  function watch(census: Census, { condition, none }: NonNullable<PollerOptions['watched']>) {
    let wokenAt = 0
    restingMs = Math.max(intervalMs ?? 0, RESTING_POLL_SECONDS * 1000)
    unwatch = census.watch({
      condition,
      found(work) {
        if (!work) return none?.()
        if (Date.now() - wokenAt < (intervalMs ?? 0)) return
        wokenAt = Date.now()
        wake()
      },
    })
  }

  return {
    wake,
    start() {
      stopped = false
      const census = watched && censusOf(watched.jobs)
      if (census && watched) watch(census, watched)
      if (intervalMs !== null) schedule(0)
    },
    async stop() {
      stopped = true
      unwatch?.()
      unwatch = undefined
      restingMs = intervalMs
      clearTimeout(timer)
      await running
    },
  }
}
