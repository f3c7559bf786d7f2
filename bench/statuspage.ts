// `pnpm bench:statuspage`: requests per second and p99 latency of a public page's summary.json
// (50 components, 1,000 past incidents, two open) without credentials, next to a bare Fastify
// in the same run sending the same answer (every header and byte of it, in either encoding):
// the target's baseline, what serving the document costs at best. The bare hello-world (the
// baseline of the other `pnpm bench*`) is reported beside it; docs/benchmarks.md says why the
// target is not taken against it.
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'
import { median, pairedRatio, percent, roundRatios } from './stats.js'
import { spawnBenchServer } from './bench-server.js'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const TARGET_RATIO = 0.5

interface Targets {
  hello: string
  bareSummary: string
  summary: string
  bytes: number
  gzipBytes: number
}

const server = spawnBenchServer('bench/statuspage-server.ts')
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)))
  createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line) as Targets))
})

interface Sample {
  requestsPerSecond: number
  p99: number
  /** The servers' CPU time per request answered: steadier than requests/s where the load generator shares the cores. */
  cpuMicroseconds: number
}

/** The server process's user + system CPU time in microseconds (Linux: /proc, in clock ticks of 10 ms). */
function serverCpu(): number {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

async function load(url: string, duration: number, headers: Record<string, string> = {}): Promise<Sample> {
  const before = serverCpu()
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration })
  const cpu = serverCpu() - before
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99, cpuMicroseconds: cpu / result.requests.total }
}

const summary = (samples: Sample[]): Sample => ({
  requestsPerSecond: median(samples.map((sample) => sample.requestsPerSecond)),
  p99: median(samples.map((sample) => sample.p99)),
  cpuMicroseconds: median(samples.map((sample) => sample.cpuMicroseconds)),
})

try {
  const gzip = { 'accept-encoding': 'gzip, deflate, br' }
  const routes = {
    hello: { url: targets.hello, headers: {} },
    bareSummary: { url: targets.bareSummary, headers: {} },
    bareSummaryGzip: { url: targets.bareSummary, headers: gzip },
    // The product API's smallest route, none of this surface's code: what its stack costs any route.
    probe: { url: new URL('/api/v1/health/live', targets.summary).href, headers: {} },
    summary: { url: targets.summary, headers: {} },
    summaryGzip: { url: targets.summary, headers: gzip },
  }
  // Warm-up (JIT, the rendered-document cache, keep-alive), then rounds that alternate the
  // routes, so drift in the machine's speed touches them alike.
  for (const route of Object.values(routes)) await load(route.url, 2, route.headers)
  const samples: Record<keyof typeof routes, Sample[]> = {
    hello: [],
    bareSummary: [],
    bareSummaryGzip: [],
    probe: [],
    summary: [],
    summaryGzip: [],
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, route] of Object.entries(routes))
      samples[name as keyof typeof routes].push(await load(route.url, DURATION_SECONDS, route.headers))
  }
  const hello = summary(samples.hello)
  const bareSummary = summary(samples.bareSummary)
  const bareSummaryGzip = summary(samples.bareSummaryGzip)
  const probe = summary(samples.probe)
  const page = summary(samples.summary)
  const pageGzip = summary(samples.summaryGzip)
  // What clients send (browsers, curl --compressed, HTTP libraries): the ratio the target is for.
  const ratio = pairedRatio(samples.summaryGzip, samples.bareSummaryGzip)
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_SECONDS} s per route (medians; ratios within each round, then their median), summary.json of ${targets.bytes} bytes (${targets.gzipBytes} gzipped), Node ${process.version}, PostgreSQL\n`,
  )
  console.log('| route | requests/s | p99 latency (ms) | server CPU per request (µs) |')
  console.log('|---|---:|---:|---:|')
  const row = (name: string, sample: Sample) =>
    console.log(`| ${name} | ${sample.requestsPerSecond.toFixed(0)} | ${sample.p99} | ${sample.cpuMicroseconds.toFixed(1)} |`)
  row('bare Fastify GET /hello', hello)
  row('bare Fastify GET /summary.json (the same answer), no Accept-Encoding', bareSummary)
  row('bare Fastify GET /summary.json (the same answer), Accept-Encoding: gzip', bareSummaryGzip)
  row('product API GET /api/v1/health/live', probe)
  row('GET …/public/:slug/api/v2/summary.json, no Accept-Encoding', page)
  row('GET …/public/:slug/api/v2/summary.json, Accept-Encoding: gzip', pageGzip)
  console.log(
    `\nratio (gzip, as clients ask): ${percent(ratio)} of the bare Fastify sending the same answer (target ${percent(TARGET_RATIO)})`,
  )
  console.log(`  by round: ${roundRatios(samples.summaryGzip, samples.bareSummaryGzip).map(percent).join(', ')}`)
  console.log(`ratio (identity): ${percent(pairedRatio(samples.summary, samples.bareSummary))} of the bare Fastify sending the same answer`)
  console.log(
    `against the bare hello-world: ${percent(pairedRatio(samples.summaryGzip, samples.hello))} (gzip), ${percent(pairedRatio(samples.summary, samples.hello))} (identity)`,
  )
  console.log(
    `server CPU per request, bare same answer / summary.json (gzip): ${(bareSummaryGzip.cpuMicroseconds / pageGzip.cpuMicroseconds).toFixed(2)}`,
  )
  process.exitCode = ratio >= TARGET_RATIO ? 0 : 1
} finally {
  server.kill('SIGTERM')
}
