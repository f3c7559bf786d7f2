// `pnpm bench:statuspage`: requests per second and p99 latency of a public page's summary.json
// (50 components, 1,000 past incidents, two open) without credentials, next to a bare Fastify
// in the same run: its hello-world (the baseline of every `pnpm bench*`), and a route answering
// a fixed string of the summary's size (what serving the document from memory costs at best).
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const TARGET_RATIO = 0.5

interface Targets {
  hello: string
  bareSummary: string
  summary: string
  bytes: number
}

const server = spawn(
  process.execPath,
  [
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : []),
    '--conditions=@svc/source',
    '--import',
    'tsx',
    'scripts/bench-statuspage-server.ts',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)))
  createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line) as Targets))
})

interface Sample {
  requestsPerSecond: number
  p99: number
}

async function load(url: string, duration: number, headers: Record<string, string> = {}): Promise<Sample> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99 }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
const summary = (samples: Sample[]): Sample => ({
  requestsPerSecond: median(samples.map((sample) => sample.requestsPerSecond)),
  p99: median(samples.map((sample) => sample.p99)),
})

try {
  const gzip = { 'accept-encoding': 'gzip, deflate, br' }
  const routes = {
    hello: { url: targets.hello, headers: {} },
    bareSummary: { url: targets.bareSummary, headers: {} },
    summary: { url: targets.summary, headers: {} },
    summaryGzip: { url: targets.summary, headers: gzip },
  }
  // Warm-up (JIT, the rendered-document cache, keep-alive), then rounds that alternate the
  // routes, so drift in the machine's speed touches them alike.
  for (const route of Object.values(routes)) await load(route.url, 2, route.headers)
  const samples: Record<keyof typeof routes, Sample[]> = { hello: [], bareSummary: [], summary: [], summaryGzip: [] }
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, route] of Object.entries(routes))
      samples[name as keyof typeof routes].push(await load(route.url, DURATION_SECONDS, route.headers))
  }
  const hello = summary(samples.hello)
  const bareSummary = summary(samples.bareSummary)
  const page = summary(samples.summary)
  const pageGzip = summary(samples.summaryGzip)
  // What clients send (browsers, curl --compressed, HTTP libraries): the ratio the target is for.
  const ratio = pageGzip.requestsPerSecond / hello.requestsPerSecond
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_SECONDS} s per route (medians), summary.json of ${targets.bytes} bytes, Node ${process.version}, PostgreSQL\n`,
  )
  console.log('| route | requests/s | p99 latency (ms) |')
  console.log('|---|---:|---:|')
  console.log(`| bare Fastify GET /hello | ${hello.requestsPerSecond.toFixed(0)} | ${hello.p99} |`)
  console.log(
    `| bare Fastify GET /summary.json (a fixed string of the same size) | ${bareSummary.requestsPerSecond.toFixed(0)} | ${bareSummary.p99} |`,
  )
  console.log(`| GET …/public/:slug/api/v2/summary.json, no Accept-Encoding | ${page.requestsPerSecond.toFixed(0)} | ${page.p99} |`)
  console.log(
    `| GET …/public/:slug/api/v2/summary.json, Accept-Encoding: gzip | ${pageGzip.requestsPerSecond.toFixed(0)} | ${pageGzip.p99} |`,
  )
  console.log(`\nratio (gzip, as clients ask): ${(ratio * 100).toFixed(1)}% of the bare hello-world (target ${TARGET_RATIO * 100}%)`)
  console.log(
    `ratio (identity): ${((page.requestsPerSecond / hello.requestsPerSecond) * 100).toFixed(1)}% of the bare hello-world, ${((page.requestsPerSecond / bareSummary.requestsPerSecond) * 100).toFixed(1)}% of the bare fixed string of the same size`,
  )
  process.exitCode = ratio >= TARGET_RATIO ? 0 : 1
} finally {
  server.kill('SIGTERM')
}
