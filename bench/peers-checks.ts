// HTTP checks against Prometheus blackbox_exporter (issue 57): the same loopback target probed at
// the same rate by blackbox_exporter's `/probe` (asked by a paced loader, as Prometheus scrapes
// it) and by our check runner (checks scheduled as in production, each run stored). Reports the
// CPU spent per check run by each: blackbox_exporter's process; our node's process and
// PostgreSQL's processes for its database, since our results are durable and theirs are not.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { sql } from 'kysely'
import { Pool } from 'undici'
import { buildApp } from '@svc/product'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
import { databaseProcesses, processCpu } from './cpu.js'
import { createBenchDatabase } from './database.js'
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

/** Our runner with `CHECKS` checks every minute on one node and PostgreSQL; answers its CPU per run done (µs), runs done and lost. */
async function ourRun(targetUrl: string) {
  const database = await createBenchDatabase('bench_peers_checks')
  const teardowns: Array<() => unknown> = [() => database.drop()]
  try {
    const issuer = await startTestIssuer({ teardown: (fn) => teardowns.unshift(fn) })
    const config = testConfig(issuer, {
      databaseUrl: database.url,
      databasePoolMax: 20,
      logLevel: 'error',
      outbound: { allowPrivateTargets: true },
      synthetics: { region: 'local', retentionDays: 30, concurrency: 100 },
    })
    const resources = await openResources(config)
    teardowns.unshift(() => resources.close())
    const app = await buildApp(config, resources)
    teardowns.unshift(() => app.close())
    await app.ready()
    const db = resources.database.db
    const organization = await db
      .insertInto('core.organizations')
      .values({ name: 'Bench', slug: 'bench-peers' })
      .returning('id')
      .executeTakeFirstOrThrow()
    // Due times spread evenly over the minute, the first 100 s from now: a fresh process spends
    // 45–60 ms of CPU a second in its first minute (JIT, first polls; decision 0033), so its idle
    // cost is measured after that, just before the first check is due. The window starts after a
    // minute of warm-up.
    const first = Math.ceil((Date.now() + 100_000) / 1000) * 1000
    await db
      .insertInto('divinux.syntheticChecks')
      .values(
        Array.from({ length: CHECKS }, (_, index) => ({
          organizationId: organization.id,
          name: `Check ${index}`,
          kind: 'http',
          request: sql`${JSON.stringify({ url: targetUrl })}::jsonb`,
          frequencySeconds: FREQUENCY_SECONDS,
          timeoutMs: 5000,
          regions: sql`array['local']::text[]`,
          nextDueAt: new Date(first + Math.floor((index * FREQUENCY_SECONDS * 1000) / CHECKS)),
        })) as never,
      )
      .execute()
    const start = first + FREQUENCY_SECONDS * 1000
    const end = start + SECONDS * 1000
    const databaseName = new URL(database.url).pathname.slice(1)
    const own = () => {
      const usage = process.cpuUsage()
      return usage.user + usage.system
    }
    /** CPU spent since `before` by the node and by these PostgreSQL processes. */
    const spentSince = (before: { node: number; pids: number[]; database: number[] }) => ({
      node: own() - before.node,
      database: before.pids.reduce((sum, pid, index) => {
        const spent = processCpu(pid) - before.database[index]!
        return Number.isFinite(spent) ? sum + spent : sum
      }, 0),
    })
    const reading = () => {
      const pids = databaseProcesses(databaseName)
      return { node: own(), pids, database: pids.map(processCpu), at: performance.now() }
    }
    // What the node and its database spend with no check due (the pollers of every surface), over
    // the 12 s before the first is due: the share of a run's CPU that is not the run's. The
    // server's writes of before (the ingestion half, other databases) are flushed first, so its
    // checkpointer's work on them is not counted as ours.
    await sql`checkpoint`.execute(db)
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
    await sql`vacuum analyze divinux.synthetic_checks, divinux.synthetic_runs`.execute(db)
    await sleep(start - Date.now())
    const before = reading()
    await sleep(end - Date.now())
    const { node, database: databaseCpu } = spentSince(before)
    // Runs that started in the window: the work the CPU above paid for.
    await sleep(10_000)
    const window = await sql<{ done: number; other: number }>`
      select count(*) filter (where state = 'done')::int as done, count(*) filter (where state <> 'done')::int as other
      from divinux.synthetic_runs where started_at >= ${new Date(start)} and started_at < ${new Date(end)}`.execute(db)
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
    for (const teardown of teardowns) await teardown()
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
