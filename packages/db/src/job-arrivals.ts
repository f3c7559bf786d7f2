/**
 * The channel the job queue's trigger (`@svc/jobs`, `installJobArrivals`) announces jobs on when
 * they commit: `<queue>:<epoch ms of the earliest start_after among them>`, one notice per queue
 * and statement. Work kept in tables of its own announces itself the same way under a name of its
 * own (migration 0080: `synthetics.checks`, the checks' next due time).
 */
export const JOBS_CHANNEL = 'svc_jobs'

export type JobArrivalHandler = (queue: string, dueAt: number) => void

/**
 * What this process hears of jobs arriving in the queue (from any replica), so workers fetch when
 * there is work rather than polling for it (decision 0032). While the listener is down, notices
 * may be missed: `live` is false, and when it listens again every subscriber is told to look.
 */
export class JobArrivals {
  readonly #handlers = new Set<JobArrivalHandler>()
  readonly #resumed = new Set<() => void>()
  #live: boolean

  constructor(live: boolean) {
    this.#live = live
  }

  get live(): boolean {
    return this.#live
  }

  /** Hears every arrival until the answered function is called. */
  subscribe(handler: JobArrivalHandler, onResume: () => void): () => void {
    this.#handlers.add(handler)
    this.#resumed.add(onResume)
    return () => {
      this.#handlers.delete(handler)
      this.#resumed.delete(onResume)
    }
  }

  /** A notification from a listening connection: the job notices among them. */
  hear({ channel, payload }: { channel: string; payload?: string }): void {
    if (channel !== JOBS_CHANNEL || payload === undefined) return
    const colon = payload.lastIndexOf(':')
    const queue = payload.slice(0, colon)
    const dueAt = Number(payload.slice(colon + 1))
    if (colon <= 0 || !Number.isFinite(dueAt)) return
    for (const handler of this.#handlers) handler(queue, dueAt)
  }

  suspend(): void {
    this.#live = false
  }

  /** Notices arrive again: any sent meanwhile were missed, so every subscriber looks now. */
  resume(): void {
    this.#live = true
    for (const resumed of this.#resumed) resumed()
  }
}
