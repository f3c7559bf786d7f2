import { randomUUID } from 'node:crypto'
import { runCheck, type AttemptResult, type BrowserRuntime, type ResultStatus, type RunnableCheck } from '@svc/check-runner'
import type { Logger } from 'pino'

// The relay: a private location's runner (issue 16, docs/decisions/0016-synthetics.md). It
// leases due runs of its regions from the product API, runs them with the same runner code the
// service uses, posts results in batches, and heartbeats. It only makes outbound requests, so
// it runs behind a firewall that lets nothing in.

export interface RelayOptions {
  /** The product API's base URL (RELAY_URL). */
  url: string
  /** The relay's key, shown once when it was created (RELAY_KEY). */
  key: string
  /** Runs at once (RELAY_CONCURRENCY). */
  concurrency: number
  /** How often it asks for due runs when it has room (RELAY_POLL_SECONDS). */
  pollSeconds: number
  /** Targets on private addresses are allowed (ALLOW_PRIVATE_TARGETS): a relay is usually inside the network it checks. */
  allowPrivateTargets: boolean
  /** Its Chromium (RELAY_CHROMIUM_PATH), when it has one: it says so at each heartbeat, and browser checks are leased to it. */
  browser?: BrowserRuntime
  log: Logger
  version?: string
}

interface LeasedRun {
  runId: string
  checkId: string
  region: string
  dueAt: string
  check: RunnableCheck
}

interface PendingResult {
  id: string
  runId: string
  status: ResultStatus
  attempts: AttemptResult[]
}

/** Half what the service takes in one batch of results (its RESULTS_BODY_LIMIT, 32 MB). */
const BATCH_BYTES = 16 * 1024 * 1024

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const woken = () => {
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', woken)
      resolve()
    }, ms)
    signal.addEventListener('abort', woken, { once: true })
  })

export function createRelay(options: RelayOptions) {
  const { log } = options
  const base = options.url.replace(/(?<!\/)\/+$/, '')
  const stop = new AbortController()
  const pending: PendingResult[] = []
  let running = 0
  let heartbeatSeconds = 10

  async function call<T>(path: string, body: object): Promise<{ status: number; body: T }> {
    const response = await fetch(`${base}/api/v1/synthetics/relay/${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.key}`,
        'content-type': 'application/json',
        ...(options.version ? { 'x-relay-version': options.version } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    })
    return { status: response.status, body: (await response.json().catch(() => ({}))) as T }
  }

  async function heartbeat(): Promise<void> {
    const answer = await call<{ heartbeatSeconds: number; regions: string[] }>('heartbeat', { browser: options.browser !== undefined })
    if (answer.status !== 200) throw new Error(`heartbeat refused: HTTP ${answer.status}`)
    heartbeatSeconds = answer.body.heartbeatSeconds
  }

  /**
   * Sends what is pending, each result with the id it was given when it was made: a batch sent
   * again after a lost answer is recorded once. A result the service refuses (409: the run is
   * no longer this relay's) is dropped with a warning, the rest are sent again.
   */
  /** The pending results a batch takes: at most 100, and at most BATCH_BYTES of JSON (screenshots are large) but at least one. */
  function nextBatch(): PendingResult[] {
    let bytes = 0
    const batch: PendingResult[] = []
    for (const result of pending.slice(0, 100)) {
      bytes += JSON.stringify(result).length
      if (batch.length > 0 && bytes > BATCH_BYTES) break
      batch.push(result)
    }
    return batch
  }

  async function flush(): Promise<void> {
    while (pending.length > 0) {
      const batch = nextBatch()
      const answer = await call<{ message?: string }>('results', { results: batch })
      if (answer.status === 200) {
        pending.splice(0, batch.length)
        continue
      }
      const refused = answer.status === 409 ? /^results\/(\d+)\//.exec(answer.body.message ?? '') : null
      if (!refused) throw new Error(`results refused: HTTP ${answer.status} ${answer.body.message ?? ''}`)
      const [dropped] = pending.splice(Number(refused[1]), 1)
      log.warn({ runId: dropped?.runId, reason: answer.body.message }, 'result dropped: the run is no longer leased by this relay')
    }
  }

  async function execute(run: LeasedRun): Promise<void> {
    running += 1
    try {
      const result = await runCheck(run.check, { allowPrivateTargets: options.allowPrivateTargets }, options.browser)
      pending.push({ id: randomUUID(), runId: run.runId, ...result })
      log.debug({ runId: run.runId, checkId: run.checkId, status: result.status }, 'run finished')
    } finally {
      running -= 1
    }
  }

  async function leaseLoop(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        await flush()
        const room = options.concurrency - running
        if (room > 0) {
          const answer = await call<{ runs: LeasedRun[] }>('lease', { max: Math.min(room, 100) })
          if (answer.status !== 200) throw new Error(`lease refused: HTTP ${answer.status}`)
          for (const run of answer.body.runs)
            void execute(run).then(() => flush().catch((error: Error) => log.warn({ err: error }, 'results not sent yet')))
        }
      } catch (error) {
        log.warn({ err: error }, 'the product API did not answer; trying again')
      }
      await sleep(options.pollSeconds * 1000, stop.signal)
    }
  }

  async function heartbeatLoop(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        await heartbeat()
      } catch (error) {
        log.warn({ err: error }, 'heartbeat failed')
      }
      await sleep(heartbeatSeconds * 1000, stop.signal)
    }
  }

  return {
    /** Runs until `stop`: one heartbeat first (a wrong key or URL fails here, loudly), then both loops. */
    async run(): Promise<void> {
      await heartbeat()
      log.info({ url: base, heartbeatSeconds }, 'relay started')
      await Promise.all([leaseLoop(), heartbeatLoop()])
      await flush().catch((error: Error) => log.warn({ err: error, pending: pending.length }, 'results left unsent at stop'))
    },
    stop: () => stop.abort(),
  }
}
