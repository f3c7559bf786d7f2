import type PgBoss from 'pg-boss'

/** A queue's name as an SQL string literal. */
const literal = (name: string) => `'${name.replaceAll("'", "''")}'`

/**
 * Which of the queues named have a job to fetch now. One statement over their partitions of
 * `pgboss.job`, each asked by name through pg-boss's fetch index (`job_i5`: name, start_after,
 * where state < 'active'), so a queue's jobs due later (the next steps of thousands of
 * escalations) are not read: a `group by name` over the whole index walked every one of them,
 * four times a second (6 ms a look in a paging burst).
 *
 * Planning it over some thirty partitions takes 2–5 ms, ten times running it, so it is a prepared
 * statement, and its queues are written into its text rather than passed: a statement with no
 * parameters is planned once per connection and that plan kept, where one with a parameter was
 * planned again at each of a connection's first five runs (custom plans) and once more for the
 * generic one, some 69 plannings in five minutes of `pnpm bench:peers`' checks half (a third of a
 * second of PostgreSQL's CPU). The names are this process's own queues, not input.
 */
const queuesWithWork = (queues: readonly string[]) => `select queue.name
  from unnest(array[${queues.map(literal).join(', ')}]::text[]) as queue(name)
  where exists (select 1 from pgboss.job where job.name = queue.name and job.state < 'active' and job.start_after < now())`

/**
 * Work kept in a table of our own (undispatched events, pending escalations), looked for by the
 * same statement as the queues' (decision 0033, "Tables"): a poller that rests until a look finds
 * its work, instead of asking once a second itself.
 */
export interface TableWatch {
  /**
   * Whether the table holds work to do now: a boolean SQL expression of constants only (an
   * `exists` served by a partial index), read at every look: four a second on a busy node, one at rest.
   */
  condition: string
  /** What each look found. */
  found(work: boolean): void
}

/** The census's one statement: which of `queues` have work (`queues`), then each watch's condition (`w0`, `w1`, …). */
function censusStatement(queues: readonly string[], conditions: readonly string[]): string {
  const columns = conditions.map((condition, index) => `, (${condition}) as w${index}`).join('')
  return `select array(${queuesWithWork(queues)}) as queues${columns}`
}

/**
 * How often the census looks: twice as often as the busiest workers polled before it, since a
 * job waits for a look and then for its worker's fetch; a job on an idle queue waits 125 ms on
 * average instead of 250 ms to 1 s (decision 0033).
 */
export const CENSUS_INTERVAL_MS = 250
/**
 * How often the census looks at rest: each look that finds nothing doubles the wait before the
 * next, up to this; a look that finds work brings it back to `CENSUS_INTERVAL_MS`. Work woken in
 * this process does not wait for a look at all (decision 0033, "At rest").
 */
export const CENSUS_RESTING_INTERVAL_MS = 1000
/**
 * How often a worker (or a table poller) fetches on its own: the safety net should a census fail.
 * pg-boss 10 polls every queue on its worker's interval (0.5–2 s here), which was most of what an
 * idle node spent, about 35 fetches a second for nothing (decision 0033). 15 s until the census
 * rested too: some 37 workers at 15 s were then half an idle node's statements; a census that
 * fails on its statement fails every look, which `product-service.test.ts` would show.
 */
export const RESTING_POLL_SECONDS = 60

export interface CensusOptions {
  /** Runs a statement prepared under a name drawn from its text (`Database['prepared']`). */
  prepared<R>(text: string, values: readonly unknown[]): Promise<R[]>
  onError(error: Error): void
  intervalMs?: number
  /** At most this long between looks at rest; not shorter than `intervalMs`. */
  restingIntervalMs?: number
  restingPollSeconds?: number
}

export interface Census {
  /** Looks now (or joins the look under way). */
  look(): Promise<void>
  /** Adds `watch` to every look from the next on; answers the function that removes it. */
  watch(watch: TableWatch): () => void
  /** How long after the last look began the next begins (ms): longer at rest. */
  readonly waitMs: number
  /** The conditions of the watches looked for now. */
  readonly conditions: readonly string[]
  stop(): void
}

/** The census of each queue that has one, for the pollers of the same process (`createPoller`). */
const censuses = new WeakMap<PgBoss, Census>()

/** The census that wakes `boss`'s workers, if it has one: without, a poller polls on its own. */
export function censusOf(boss: PgBoss): Census | undefined {
  return censuses.get(boss)
}

/**
 * Wakes this process's pg-boss workers when their queues have work, instead of each polling its
 * own (decision 0033): every `intervalMs` one statement asks which queues hold a job that can
 * be fetched now, and only those queues' workers fetch (`notifyWorker`), each at most as often
 * as it asked to poll. A job sent, retried, or come due by its `start_after`, from any replica,
 * is seen the same way. Wakes are coalesced by construction, and the jobs arrived between two
 * fetches are fetched as one batch, as before; under load a worker fetches as often as it did,
 * at rest it does not fetch at all. Workers registered through `boss.work` after this call poll
 * on their own only every `restingPollSeconds`.
 *
 * Written here because pg-boss 10, the newest that runs on Node 20, has no such thing; pg-boss 12
 * wakes workers by LISTEN/NOTIFY but needs Node 22.12. A trigger-and-notify wake of our own was
 * tried and withdrawn (decision 0032).
 */
export function wakeWorkersByCensus(boss: PgBoss, options: CensusOptions): Census {
  const intervalMs = options.intervalMs ?? CENSUS_INTERVAL_MS
  const restingIntervalMs = Math.max(intervalMs, options.restingIntervalMs ?? CENSUS_RESTING_INTERVAL_MS)
  /** The wait before the next look: `intervalMs` while looks find work, growing to `restingIntervalMs` while they do not. */
  let wait = intervalMs
  const restingPollSeconds = options.restingPollSeconds ?? RESTING_POLL_SECONDS
  /** This process's workers by queue: the interval each asked to poll at, and when the census last woke it. */
  const workers = new Map<string, Map<string, { intervalMs: number; wokenAt: number }>>()
  const watches = new Set<TableWatch>()
  /** The statement for the queues and watches of now (a connection prepares each text once). */
  let statement: { text: string; watches: TableWatch[] } | undefined
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let looking: Promise<void> | undefined

  function currentStatement() {
    if (!statement) {
      const watching = [...watches]
      const text = censusStatement(
        [...workers.keys()],
        watching.map((watch) => watch.condition),
      )
      statement = { text, watches: watching }
    }
    return statement
  }

  /** One look; answers whether it found work, for a queue or a table. */
  async function takeCensus(): Promise<boolean> {
    if (workers.size === 0 && watches.size === 0) return false
    const { text, watches: watching } = currentStatement()
    const [row] = await options.prepared<Record<string, unknown> & { queues: string[] }>(text, [])
    const found = watching.map((_, index) => row?.[`w${index}`] === true)
    watching.forEach((watch, index) => watch.found(found[index]!))
    const now = Date.now()
    for (const queue of row?.queues ?? [])
      for (const [id, worker] of workers.get(queue) ?? []) {
        // Never more often than the worker asked to poll: under load it fetches as it did before.
        if (now - worker.wokenAt < worker.intervalMs) continue
        worker.wokenAt = now
        boss.notifyWorker(id)
      }
    return (row?.queues.length ?? 0) > 0 || found.includes(true)
  }

  /** Looks now (or joins the look under way). */
  function look(): Promise<void> {
    looking ??= takeCensus()
      .then(
        (found) => void (wait = found ? intervalMs : Math.min(wait * 2, restingIntervalMs)),
        (error: Error) => options.onError(error),
      )
      .finally(() => (looking = undefined))
    return looking
  }

  /** The next look `wait` after the last one began, however long that one took. */
  function schedule(lastBegan = Date.now()): void {
    if (stopped) return
    timer = setTimeout(
      () => {
        const began = Date.now()
        void look().then(() => schedule(began))
      },
      Math.max(0, lastBegan + wait - Date.now()),
    )
    timer.unref()
  }

  const work = boss.work.bind(boss) as (name: string, ...rest: unknown[]) => Promise<string>
  const offWork = boss.offWork.bind(boss)
  boss.work = (async (name: string, ...rest: unknown[]) => {
    const handler = rest.pop()
    const workOptions = (rest[0] ?? {}) as PgBoss.WorkOptions
    const id = await work(name, { ...workOptions, pollingIntervalSeconds: restingPollSeconds }, handler)
    const ids = workers.get(name) ?? new Map<string, { intervalMs: number; wokenAt: number }>()
    ids.set(id, { intervalMs: (workOptions.pollingIntervalSeconds ?? 2) * 1000, wokenAt: 0 })
    // A queue new to the census is written into its statement (`queuesWithWork`).
    if (!workers.has(name)) statement = undefined
    workers.set(name, ids)
    return id
  }) as PgBoss['work']
  boss.offWork = (async (value: string | { id: string }) => {
    const before = workers.size
    if (typeof value === 'string') workers.delete(value)
    else
      for (const [name, ids] of workers) {
        ids.delete(value.id)
        if (ids.size === 0) workers.delete(name)
      }
    if (workers.size !== before) statement = undefined
    await offWork(value as never)
  }) as PgBoss['offWork']

  schedule()
  const stop = () => {
    stopped = true
    clearTimeout(timer)
  }
  boss.on('stopped', stop)
  const census: Census = {
    look,
    get waitMs() {
      return wait
    },
    get conditions() {
      return [...watches].map((watch) => watch.condition)
    },
    watch(watch) {
      watches.add(watch)
      statement = undefined
      return () => {
        watches.delete(watch)
        statement = undefined
      }
    },
    stop,
  }
  censuses.set(boss, census)
  return census
}
