// @fastify/rate-limit's in-memory store (a fixed window per key in a bounded LRU map), which the
// package ships without types. Declared for the per-address limit (rate-limits.ts).
declare module '@fastify/rate-limit/store/LocalStore.js' {
  interface CountingWindow {
    /** Requests counted in the key's current window, this one included. */
    current: number
    /** Milliseconds until the window ends. */
    ttl: number
  }
  class LocalStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, cache?: number)
    incr(key: string, callback: (error: Error | null, window: CountingWindow) => void, timeWindow: number, max: number): void
  }
  export = LocalStore
}
