// `pnpm bench:synthetics`: BENCH_SYNTHETICS_CHECKS HTTP checks (10,000) at a 1-minute frequency
// against a loopback target, for BENCH_SYNTHETICS_SECONDS (300), on one product API node on
// PostgreSQL, scheduled as in production. Reports scheduling lag (due time to start)
// p50/p99, runs per second, the node's CPU per run, database rows written per run, and runs lost
// or doubled (issue 16's targets: lag p99 under 2 s, none lost or doubled). The target answers in
// a process of its own, so its work is not counted as the node's.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { sql } from 'kysely'
import { insertHttpChecks, startCheckRunner } from './check-fleet.js'
import { createBenchDatabase } from './database.js'
import { footprintOf, footprintTable } from './footprint.js'

const CHECKS = Number(process.env.BENCH_SYNTHETICS_CHECKS ?? 10_000)
const SECONDS = Number(process.env.BENCH_SYNTHETICS_SECONDS ?? 300)
const CONCURRENCY = Number(process.env.BENCH_SYNTHETICS_CONCURRENCY ?? 100)
const FREQUENCY_SECONDS = 60
/** After the window, runs due in it get this long to finish before they are counted. */
const SETTLE_SECONDS = 20
const TARGET_LAG_P99_MS = 2000

const target = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('{"status":"ok"}'));
     s.keepAliveTimeout = 1000; s.listen(0, '127.0.0.1', () => console.log(s.address().port))`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const port = (await createInterface({ input: target.stdout })[Symbol.asyncIterator]().next()).value as string
const targetUrl = `http://127.0.0.1:${port.trim()}/health`

const database = await createBenchDatabase('bench_synthetics')
const teardowns: Array<() => unknown> = [() => target.kill(), () => database.drop()]
try {
  const db = await startCheckRunner(database.url, CONCURRENCY, teardowns)

  // The checks, written directly: due times spread evenly over the first
  // minute, starting 20 s from now, as a fleet of checks created over time would be.
  const start = Math.ceil((Date.now() + 20_000) / 1000) * 1000
  const offsets = await insertHttpChecks(db, {
    slug: 'bench-synthetics',
    count: CHECKS,
    targetUrl,
    frequencySeconds: FREQUENCY_SECONDS,
    first: start,
  })
  const end = start + SECONDS * 1000
  // Every due time of every check inside [start, end).
  const expected = offsets.reduce((sum, offset) => sum + Math.ceil((SECONDS * 1000 - offset) / (FREQUENCY_SECONDS * 1000)), 0)
  const rowsWritten = async () => {
    await sql`select pg_stat_clear_snapshot()`.execute(db)
    const result = await sql<{ rows: string }>`
      select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text as rows from pg_stat_all_tables where schemaname in ('divinux', 'pgboss')`.execute(
      db,
    )
    return Number(result.rows[0]!.rows)
  }

  process.stderr.write(`${CHECKS} checks, first due ${new Date(start).toISOString()}, measuring ${SECONDS} s\n`)
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, start - Date.now())))
  const rowsBefore = await rowsWritten()
  const cpuBefore = process.cpuUsage()
  await new Promise((resolve) => setTimeout(resolve, end - Date.now() + SETTLE_SECONDS * 1000))
  const cpu = process.cpuUsage(cpuBefore)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const rowsAfter = await rowsWritten()

  const window = await sql<{ state: string; runs: number; p50: number | null; p99: number | null; max: number | null }>`
    select state, count(*)::int as runs,
      percentile_cont(0.5) within group (order by extract(epoch from started_at - due_at) * 1000)::float8 as p50,
      percentile_cont(0.99) within group (order by extract(epoch from started_at - due_at) * 1000)::float8 as p99,
      max(extract(epoch from started_at - due_at) * 1000)::float8 as max
    from divinux.synthetic_runs where due_at >= ${new Date(start)} and due_at < ${new Date(end)}
    group by state`.execute(db)
  const done = window.rows.find((row) => row.state === 'done')
  const doneRuns = done?.runs ?? 0
  const counted = window.rows.reduce((sum, row) => sum + row.runs, 0)
  const doubled = await sql<{ n: number }>`
    select count(*)::int as n from (
      select check_id, due_at from divinux.synthetic_runs group by check_id, due_at having count(*) > 1
    ) twice`.execute(db)
  const allRuns = await sql<{
    n: number
  }>`select count(*)::int as n from divinux.synthetic_runs where due_at >= ${new Date(start)}`.execute(db)
  const cpuMs = (cpu.user + cpu.system) / 1000
  const lost = expected - doneRuns
  const lagP99 = done?.p99 ?? Infinity

  console.log(
    `\n${CHECKS} HTTP checks every ${FREQUENCY_SECONDS} s against a loopback target for ${SECONDS} s, one node, PostgreSQL, concurrency ${CONCURRENCY}, Node ${process.version}\n`,
  )
  console.log('| measure | value |')
  console.log('|---|---:|')
  console.log(`| runs due in the window | ${expected} |`)
  console.log(`| runs done | ${doneRuns} |`)
  console.log(
    `| runs lost (due, not done) | ${lost} (${
      window.rows
        .filter((row) => row.state !== 'done')
        .map((row) => `${row.state} ${row.runs}`)
        .join(', ') || 'none pending'
    }; ${expected - counted} never created) |`,
  )
  console.log(`| runs doubled | ${doubled.rows[0]!.n} |`)
  console.log(`| scheduling lag p50 / p99 / max (ms) | ${done?.p50?.toFixed(0)} / ${done?.p99?.toFixed(0)} / ${done?.max?.toFixed(0)} |`)
  console.log(`| runs per second | ${(doneRuns / SECONDS).toFixed(1)} |`)
  console.log(`| node CPU per run (ms) | ${(cpuMs / Math.max(1, allRuns.rows[0]!.n)).toFixed(2)} |`)
  console.log(`| database rows written per run | ${((rowsAfter - rowsBefore) / Math.max(1, allRuns.rows[0]!.n)).toFixed(1)} |`)
  const footprint = await footprintOf(db, ['divinux.synthetic_runs', 'divinux.synthetic_rollups', 'divinux.synthetic_checks'])
  console.log(`\nstorage after the run (docs/sizing.md):\n${footprintTable(footprint)}`)
  const met = lagP99 < TARGET_LAG_P99_MS && lost === 0 && doubled.rows[0]!.n === 0
  console.log(`\ntargets (lag p99 < ${TARGET_LAG_P99_MS} ms, none lost or doubled): ${met ? 'met' : 'NOT met'}`)
  process.exitCode = met ? 0 : 1
} finally {
  for (const teardown of teardowns) await teardown()
}
