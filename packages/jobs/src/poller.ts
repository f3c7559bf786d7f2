import type { FastifyBaseLogger } from 'fastify'

export interface PollerOptions {
  /** How often it looks when nobody wakes it; null: only when woken (a helper another poller wakes). */
  intervalMs: number | null
  /** One pass; answers whether there is more to do at once (a full batch). */
  round: () => Promise<{ more: boolean }>
  log: FastifyBaseLogger
  /** What a failed round was doing, for the log line. */
  what: string
}

export interface Poller {
  /** Run a round now rather than at the next interval (a round running now runs once more). */
  wake(): void
  start(): void
  stop(): Promise<void>
}

/**
 * A worker for work written to tables (pending escalations, undispatched alert events): rounds run one
 * at a time, when woken by the request that wrote the work and every interval as a safety net.
 * The rows are claimed `for update skip locked`, so replicas share the work.
 */
export function createPoller({ intervalMs, round, log, what }: PollerOptions): Poller {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let stopped = true

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
        if (intervalMs !== null) schedule(intervalMs)
      })
    }, delay)
    timer.unref()
  }

  return {
    wake() {
      if (stopped) return
      if (running) {
        again = true
        return
      }
      clearTimeout(timer)
      schedule(0)
    },
    start() {
      stopped = false
      if (intervalMs !== null) schedule(0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
