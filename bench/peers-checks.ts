// HTTP checks against Prometheus blackbox_exporter (issue 57): the same loopback target probed at
// the same rate by blackbox_exporter's `/probe` (asked by a paced loader, as Prometheus scrapes
// it) and by our check runner (checks scheduled as in production, each run stored). Reports the
// CPU spent per check run by each: blackbox_exporter's process; our node's process and
// PostgreSQL's processes for its database, since our results are durable and theirs are not.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { Pool } from 'undici'
import { spawnBenchServer } from './bench-server.js'
import { databaseProcesses, processCpu } from './cpu.js'
import { startBlackboxExporter } from './peer-process.js'

const CHECKS = Number(process.env.BENCH_PEERS_CHECKS ?? 1200)
const FREQUENCY_SECONDS = 60
const SECONDS = Number(process.env.BENCH_PEERS_CHECK_SECONDS ?? 60)
/** Issue 57: our CPU per HTTP check run at most this many times blackbox_exporter's. */
export const CHECKS_TARGET = 1.5
const perSecond = CHECKS / FREQUENCY_SECONDS

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A loopback target in a process of its own, so its work is counted for no one. */
async function startTarget() {
  const target = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:http').createServer((q, r) => r.end('{"status":"ok"}'));
       s.keepAliveTimeout = 1000; s.listen(0, '127.0.0.1', () => console.log(s.address().port))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const port = (await createInterface({ input: target.stdout! })[Symbol.asyncIterator]().next()).value as string
  return { url: `http://127.0.0.1:${port.trim()}/health`, stop: () => target.kill() }
}

/** blackbox_exporter probing the target `perSecond` times a second for `SECONDS`; answers its CPU per probe (µs) and the probes that failed. */
async function blackboxRun(targetUrl: string) {
  const exporter = await startBlackboxExporter()
  const pool = new Pool(exporter.url, { connections: 20 })
  const path = `/probe?module=http_2xx&target=${encodeURIComponent(targetUrl)}`
  try {
    const probe = async () => {
      const response = await pool.request({ path, method: 'GET' })
      const text = await response.body.text()
      return response.statusCode === 200 && /^probe_success 1$/m.test(text)
    }
    for (let warm = 0; warm < 50; warm++) await probe()
    const before = processCpu(exporter.pid)
    const started = performance.now()
    const pending: Array<Promise<boolean>> = []
    for (let index = 0; index < perSecond * SECONDS; index++) {
      // Paced as a scraper is: the next probe at its time, whatever the last one is doing.
      const due = started + (index * 1000) / perSecond
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      pending.push(probe().catch(() => false))
    }
    const outcomes = await Promise.all(pending)
    const spent = processCpu(exporter.pid) - before
    return { cpuPerRun: spent / outcomes.length, runs: outcomes.length, failed: outcomes.filter((ok) => !ok).length }
  } finally {
    await pool.close()
    await exporter.stop()
  }
}

/**
 * Our runner with `CHECKS` checks every minute, in a process of its own (bench/checks-server.ts)
 * with PostgreSQL; answers its CPU per run done (µs), runs done and lost.
 */
async function ourRun(targetUrl: string) {
  const server = spawnBenchServer('bench/checks-server.ts', {
    BENCH_CHECKS_TARGET: targetUrl,
    BENCH_CHECKS_COUNT: String(CHECKS),
    BENCH_CHECKS_FREQUENCY: String(FREQUENCY_SECONDS),
  })
  const exited = new Promise((resolve) => server.once('exit', resolve))
  let db: pg.Client | undefined
  try {
    const ready = (await createInterface({ input: server.stdout })[Symbol.asyncIterator]().next()).value as string | undefined
    if (!ready) throw new Error('the checks server stopped')
    const { database, url, first } = JSON.parse(ready) as { database: string; url: string; first: number }
    // The bench's own connection, for what autovacuum and a checkpoint would do and for the count
    // of runs; idle in the windows, so its backend adds nothing to them.
    db = new pg.Client({ connectionString: url })
    await db.connect()
    const start = first + FREQUENCY_SECONDS * 1000
    const end = start + SECONDS * 1000
    /** CPU spent since `before` by our server and by these PostgreSQL processes. */
    const spentSince = (before: { node: number; pids: number[]; database: number[] }) => ({
      node: processCpu(server.pid) - before.node,
      database: before.pids.reduce((sum, pid, index) => {
        const spent = processCpu(pid) - before.database[index]!
        return Number.isFinite(spent) ? sum + spent : sum
      }, 0),
    })
    const reading = () => {
      const pids = databaseProcesses(database)
      return { node: processCpu(server.pid), pids, database: pids.map(processCpu), at: performance.now() }
    }
    // What the node and its database spend with no check due (the pollers of every surface), over
    // the 12 s before the first is due: the share of a run's CPU that is not the run's. The
    // server's writes of before (the ingestion half, other databases) are flushed first, so its
    // checkpointer's work on them is not counted as ours.
    await db.query('checkpoint')
    await sleep(first - 13_000 - Date.now())
    const idleBefore = reading()
    await sleep(12_000)
    const idle = spentSince(idleBefore)
    const idleSeconds = (performance.now() - idleBefore.at) / 1000
    const idlePerSecond = (idle.node + idle.database) / idleSeconds
    // What autovacuum would have done by now, in its own workers, which this bench does not count
    // (cpu.ts): the statistics of the checks and of the first minute's runs, without which the
    // planner guesses at the rows of every statement, and their dead rows. This machine's
    // PostgreSQL may run without autovacuum (bench:audit does the same).
    await sleep(start - 5_000 - Date.now())
    await db.query('vacuum analyze divinux.synthetic_checks, divinux.synthetic_runs')
    await sleep(start - Date.now())
    const before = reading()
    await sleep(end - Date.now())
    const { node, database: databaseCpu } = spentSince(before)
    // Runs that started in the window: the work the CPU above paid for.
    await sleep(10_000)
    const window = await db.query<{ done: number; other: number }>(
      `select count(*) filter (where state = 'done')::int as done, count(*) filter (where state <> 'done')::int as other
       from divinux.synthetic_runs where started_at >= $1 and started_at < $2`,
      [new Date(start), new Date(end)],
    )
    const { done, other } = window.rows[0]!
    const runs = Math.max(1, done)
    return {
      cpuPerRun: (node + databaseCpu) / runs,
      nodePerRun: node / runs,
      idlePerRun: (idlePerSecond * SECONDS) / runs,
      idleNodePerRun: ((idle.node / idleSeconds) * SECONDS) / runs,
      runs: done,
      failed: other,
    }
  } finally {
    await db?.end()
    server.kill('SIGTERM')
    await exited
  }
}

export interface ChecksComparison {
  lines: string[]
  ratio: number
}

export async function checksAgainstBlackbox(): Promise<ChecksComparison> {
  const target = await startTarget()
  try {
    const peer = await blackboxRun(target.url)
    const ours = await ourRun(target.url)
    const ratio = ours.cpuPerRun / peer.cpuPerRun
    return {
      ratio,
      lines: [
        `HTTP checks of one loopback target, ${perSecond.toFixed(0)} a second for ${SECONDS} s each (${CHECKS} checks a minute), Node ${process.version}, PostgreSQL`,
        '',
        '| runner | runs | failed | CPU per run (µs) | of which the node (µs) | of which spent with no check due (µs) | of that, the node (µs) | ratio to blackbox_exporter |',
        '|---|---:|---:|---:|---:|---:|---:|---:|',
        `| blackbox_exporter /probe (nothing stored) | ${peer.runs} | ${peer.failed} | ${peer.cpuPerRun.toFixed(0)} | — | — | — | 1.00 |`,
        `| ours, every run stored (node and PostgreSQL) | ${ours.runs} | ${ours.failed} | ${ours.cpuPerRun.toFixed(0)} | ${ours.nodePerRun.toFixed(0)} | ${ours.idlePerRun.toFixed(0)} | ${ours.idleNodePerRun.toFixed(0)} | ${ratio.toFixed(2)} |`,
      ],
    }
  } finally {
    target.stop()
  }
}
