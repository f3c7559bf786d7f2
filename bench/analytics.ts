// `pnpm bench:analytics`: product analytics on PostgreSQL, next to a bare Fastify in the same run.
//
// 1. Ingestion: batches of 500 Segment-style track events (~150 bytes each) posted to
//    POST …/analytics/batch over BENCH_CONNECTIONS connections for BENCH_ANALYTICS_DURATION
//    seconds (two alternating halves against the bare baseline). Reports events/s and checks
//    nothing was lost: the rows stored equal the events the answers call `stored`.
//    Target: at least 20,000 events/s.
// 2. Summaries: the table is filled to BENCH_ANALYTICS_ROWS rows (10^7) across 100
//    organizations, the measured one holding a fifth over 170 days; then GET …/usage/events
//    over 90 days, by day and by week, with and without an event filter, one request at a time.
//    Target: p95 under 50 ms.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { Pool } from 'undici'
import { footprintTable } from './footprint.js'

const DURATION_SECONDS = Number(process.env.BENCH_ANALYTICS_DURATION ?? 30)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const TOTAL_ROWS = Number(process.env.BENCH_ANALYTICS_ROWS ?? 10_000_000)
const SUMMARY_REQUESTS = 300
const BATCH = 500
const TARGET_EVENTS_PER_SECOND = 20_000
const TARGET_SUMMARY_P95_MS = 50
const DAY = 86_400_000

const server = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', 'bench/analytics-server.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]()
const ready = await lines.next()
if (ready.done) throw new Error('the bench server stopped')
const targets = JSON.parse(ready.value) as { bare: string; platform: string; organizationId: string; token: string; databaseUrl: string }
const headers = { authorization: `Bearer ${targets.token}`, 'content-type': 'application/json' }
const batchPath = `/api/v1/organizations/${targets.organizationId}/analytics/batch`

const EVENTS = [
  'Dashboard Viewed',
  'Alert Opened',
  'Check Viewed',
  'Search Run',
  'Incident Viewed',
  'Page Edited',
  'Filter Changed',
  'Export Clicked',
]
let sequence = 0
function batchBody(): string {
  const now = Date.now()
  const batch = Array.from({ length: BATCH }, () => {
    sequence += 1
    return {
      type: 'track',
      event: EVENTS[sequence % EVENTS.length],
      messageId: `${process.pid}-${sequence}`,
      anonymousId: `device-${sequence % 300}`,
      timestamp: new Date(now - (sequence % 30) * DAY).toISOString(),
      properties: { plan: 'team', page: `/section/${sequence % 40}`, position: sequence % 10 },
    }
  })
  return JSON.stringify({ batch, sentAt: new Date(now).toISOString() })
}

interface Run {
  events: number
  failed: number
  seconds: number
}

async function ingest(origin: string, path: string, duration: number): Promise<Run> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 })
  let events = 0
  let failed = 0
  const started = performance.now()
  const deadline = started + duration * 1000
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const response = await pool.request({ path, method: 'POST', headers, body: batchBody() })
        const text = await response.body.text()
        if (response.statusCode !== 200) {
          failed += BATCH
          continue
        }
        const answer = JSON.parse(text) as { stored?: number }
        events += answer.stored ?? BATCH
        if (answer.stored !== undefined && answer.stored !== BATCH) failed += BATCH - answer.stored
      }
    }),
  )
  await pool.close()
  return { events, failed, seconds: (performance.now() - started) / 1000 }
}

const perSecond = (runs: Run[]) => runs.reduce((sum, run) => sum + run.events, 0) / runs.reduce((sum, run) => sum + run.seconds, 0)
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0

async function timedGets(origin: string, paths: string[]): Promise<number[]> {
  const pool = new Pool(origin, { connections: 1 })
  const times: number[] = []
  for (const path of paths) {
    const sent = performance.now()
    const response = await pool.request({ path, method: 'GET', headers })
    await response.body.text()
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`)
    times.push(performance.now() - sent)
  }
  await pool.close()
  return times
}

const client = new pg.Client({ connectionString: targets.databaseUrl })
await client.connect()
try {
  // Ingestion.
  await ingest(targets.bare, '/batch', 3)
  const warm = await ingest(targets.platform, batchPath, 3)
  const bareRuns: Run[] = []
  const ingestRuns: Run[] = []
  for (let round = 0; round < 2; round++) {
    bareRuns.push(await ingest(targets.bare, '/batch', DURATION_SECONDS / 2))
    ingestRuns.push(await ingest(targets.platform, batchPath, DURATION_SECONDS / 2))
  }
  const answered = warm.events + ingestRuns.reduce((sum, run) => sum + run.events, 0)
  const failed = warm.failed + ingestRuns.reduce((sum, run) => sum + run.failed, 0)
  const { rows: counted } = await client.query<{ events: string }>(
    `select count(*) as events from core.analytics_events where organization_id = $1 and source = 'client'`,
    [targets.organizationId],
  )
  const storedRows = Number(counted[0]!.events)
  const eventsPerSecond = perSecond(ingestRuns)

  // Fill to TOTAL_ROWS: a fifth for the measured organization, the rest over 99 others, over 170
  // days, with their daily summaries computed as the insert statement computes them.
  const started = performance.now()
  const others: string[] = []
  for (let index = 0; index < 99; index++) {
    const { rows } = await client.query<{ id: string }>(`insert into core.organizations (name, slug) values ($1, $1) returning id`, [
      `bench-other-${index}-${randomUUID().slice(0, 8)}`,
    ])
    others.push(rows[0]!.id)
  }
  const remaining = Math.max(0, TOTAL_ROWS - storedRows)
  const chunk = 1_000_000
  for (let offset = 0; offset < remaining; offset += chunk) {
    const size = Math.min(chunk, remaining - offset)
    await client.query(
      `insert into core.analytics_events (organization_id, message_id, event, anonymous_id, properties, source, occurred_at)
       select case when g % 5 = 0 then $1::uuid else ($2::uuid[])[1 + (g % 99)] end, 'seed-' || g, 'Seeded ' || (g % 12),
              'device-' || (g % 400), '{"seeded": true}', 'client', now() - ((g * 7919) % (170 * 86400)) * interval '1 second'
         from generate_series($3::int8, $4::int8) g`,
      [targets.organizationId, others, offset + 1, offset + size],
    )
    process.stderr.write(`seeded ${offset + size} of ${remaining} rows\n`)
  }
  await client.query(
    `insert into core.analytics_daily (organization_id, day, event, events)
     select organization_id, (occurred_at at time zone 'UTC')::date, event, count(*) from core.analytics_events
      where message_id like 'seed-%' group by 1, 2, 3
     on conflict (organization_id, day, event) do update set events = core.analytics_daily.events + excluded.events`,
  )
  await client.query(
    `insert into core.analytics_daily_users (organization_id, event, day, user_key)
     select distinct organization_id, names.event, (occurred_at at time zone 'UTC')::date, 'anon:' || anonymous_id
       from core.analytics_events cross join lateral (values (event), ('')) as names(event)
      where message_id like 'seed-%'
     on conflict do nothing`,
  )
  await client.query('analyze core.analytics_events, core.analytics_daily, core.analytics_daily_users')
  const { rows: total } = await client.query<{ rows: string }>('select count(*) as rows from core.analytics_events')
  const seedSeconds = (performance.now() - started) / 1000

  // Summaries.
  const today = new Date()
  const day = (offset: number) => new Date(today.getTime() + offset * DAY).toISOString().slice(0, 10)
  const summaryPaths = Array.from({ length: SUMMARY_REQUESTS }, (_, index) => {
    const interval = index % 2 === 0 ? 'day' : 'week'
    const event = index % 3 === 0 ? `&event=${encodeURIComponent(`Seeded ${index % 12}`)}` : ''
    return `/api/v1/organizations/${targets.organizationId}/usage/events?from=${day(-90)}&to=${day(1)}&interval=${interval}${event}`
  })
  await timedGets(targets.platform, summaryPaths.slice(0, 20))
  const summaryTimes = await timedGets(targets.platform, summaryPaths)
  const bareTimes = await timedGets(
    targets.bare,
    summaryPaths.map(() => '/summary'),
  )

  const summaryP95 = percentile(summaryTimes, 0.95)
  console.log(
    `\n${CONNECTIONS} connections, batches of ${BATCH} events, ${DURATION_SECONDS} s per target, Node ${process.version}, PostgreSQL\n`,
  )
  console.log('| target | events/s | ratio to bare |')
  console.log('|---|---:|---:|')
  console.log(`| bare Fastify POST (parse JSON, 200) | ${perSecond(bareRuns).toFixed(0)} | 100% |`)
  console.log(`| POST …/analytics/batch | ${eventsPerSecond.toFixed(0)} | ${((eventsPerSecond / perSecond(bareRuns)) * 100).toFixed(1)}% |`)
  console.log(
    `\nevents stored: ${storedRows}; stored per the answers (warm-up included): ${answered}; refused or failed: ${failed}; ${
      storedRows === answered && failed === 0 ? 'none lost' : 'MISMATCH'
    }`,
  )
  console.log(`ingestion: ${eventsPerSecond.toFixed(0)} events/s (target ${TARGET_EVENTS_PER_SECOND})`)
  console.log(
    `\nsummaries over ${Number(total[0]!.rows).toLocaleString('en')} rows (filled in ${seedSeconds.toFixed(0)} s), ${SUMMARY_REQUESTS} requests, 90 days:`,
  )
  console.log('| target | p50 (ms) | p95 (ms) | max (ms) |')
  console.log('|---|---:|---:|---:|')
  console.log(
    `| bare Fastify GET | ${percentile(bareTimes, 0.5).toFixed(1)} | ${percentile(bareTimes, 0.95).toFixed(1)} | ${Math.max(...bareTimes).toFixed(1)} |`,
  )
  console.log(
    `| GET …/usage/events | ${percentile(summaryTimes, 0.5).toFixed(1)} | ${summaryP95.toFixed(1)} | ${Math.max(...summaryTimes).toFixed(1)} |`,
  )
  console.log(`summary p95: ${summaryP95.toFixed(1)} ms (target < ${TARGET_SUMMARY_P95_MS})`)
  const { rows: footprint } = await client.query<{ table: string; rows: string; bytes: string }>(
    `select name as table, (xpath('/row/c/text()', query_to_xml(format('select count(*) as c from %s', name), false, true, '')))[1]::text as rows,
            coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree(name::regclass)), pg_total_relation_size(name::regclass))::text as bytes
       from unnest(array['core.analytics_events', 'core.analytics_daily', 'core.analytics_daily_users']) as name`,
  )
  console.log(
    `\nstorage (docs/sizing.md):\n${footprintTable(footprint.map((row) => ({ table: row.table, rows: Number(row.rows), bytes: Number(row.bytes) })))}`,
  )
  process.exitCode =
    eventsPerSecond >= TARGET_EVENTS_PER_SECOND && storedRows === answered && failed === 0 && summaryP95 < TARGET_SUMMARY_P95_MS ? 0 : 1
} finally {
  await client.end()
  server.kill('SIGTERM')
}
