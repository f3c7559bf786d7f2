/**
 * The channel on which work kept in tables announces when it falls due, when the statement that
 * made it due commits: `<name>:<epoch ms>`. Migration 0080's trigger sends
 * `synthetics.checks:<the earliest next due time>` for checks created, resumed or moved.
 */
export const DUE_CHANNEL = 'svc_due'

export type DueHandler = (name: string, dueAt: number) => void

/**
 * What this process hears of work falling due (from any replica), so a worker can sleep until
 * then rather than poll (decision 0032). While the listener is down, notices may be missed:
 * `live` is false, and when it listens again every subscriber is told to look.
 */
export class DueNotices {
  readonly #handlers = new Set<DueHandler>()
  readonly #resumed = new Set<() => void>()
  #live: boolean

  constructor(live: boolean) {
    this.#live = live
  }

  get live(): boolean {
    return this.#live
  }

  /** Hears every notice, and every resumption, until the answered function is called. */
  subscribe(handler: DueHandler, onResume: () => void): () => void {
    this.#handlers.add(handler)
    this.#resumed.add(onResume)
    return () => {
      this.#handlers.delete(handler)
      this.#resumed.delete(onResume)
    }
  }

  /** A notification from a listening connection: the due notices among them. */
  hear({ channel, payload }: { channel: string; payload?: string }): void {
    if (channel !== DUE_CHANNEL || payload === undefined) return
    const colon = payload.lastIndexOf(':')
    const name = payload.slice(0, colon)
    const dueAt = Number(payload.slice(colon + 1))
    if (colon <= 0 || !Number.isFinite(dueAt)) return
    for (const handler of this.#handlers) handler(name, dueAt)
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
