// `pnpm bench`: requests per second and p99 latency of GET /api/v1/users/me with a Bearer
// token, next to a bare Fastify hello-world measured in the same run on the same machine.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'
import { median, pairedRatio, percent, roundRatios } from './bench-stats.js'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const TARGET_RATIO = 0.5

interface Targets {
  bare: string
  platform: string
  token: string
}

const server = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', 'scripts/bench-server.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)))
  createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line) as Targets))
})

interface Sample {
  requestsPerSecond: number
  p99: number
}

async function load(url: string, headers: Record<string, string>, duration: number): Promise<Sample> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99 }
}

function summary(samples: Sample[]): Sample {
  return { requestsPerSecond: median(samples.map((sample) => sample.requestsPerSecond)), p99: median(samples.map((sample) => sample.p99)) }
}

try {
  const routes = {
    bare: { url: targets.bare, headers: {} },
    authenticated: { url: targets.platform, headers: { authorization: `Bearer ${targets.token}` } },
  }
  // Warm-up (JIT, the verified-session cache, keep-alive connections), then rounds that
  // alternate the two routes, so drift in the machine's speed touches both alike.
  for (const route of Object.values(routes)) await load(route.url, route.headers, 2)
  const samples: Record<keyof typeof routes, Sample[]> = { bare: [], authenticated: [] }
  for (let round = 0; round < ROUNDS; round += 1) {
    samples.bare.push(await load(routes.bare.url, routes.bare.headers, DURATION_SECONDS))
    samples.authenticated.push(await load(routes.authenticated.url, routes.authenticated.headers, DURATION_SECONDS))
  }
  const bare = summary(samples.bare)
  const authenticated = summary(samples.authenticated)
  const ratio = pairedRatio(samples.authenticated, samples.bare)
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_SECONDS} s per route (medians; the ratio is each round's, then their median), Node ${process.version}\n`,
  )
  console.log('| route | requests/s | p99 latency (ms) |')
  console.log('|---|---:|---:|')
  console.log(`| bare Fastify GET /hello | ${bare.requestsPerSecond.toFixed(0)} | ${bare.p99} |`)
  console.log(`| GET /api/v1/users/me (Bearer) | ${authenticated.requestsPerSecond.toFixed(0)} | ${authenticated.p99} |`)
  console.log(`\nratio: ${percent(ratio)} of the bare baseline (target ${percent(TARGET_RATIO)})`)
  console.log(`  by round: ${roundRatios(samples.authenticated, samples.bare).map(percent).join(', ')}`)
  process.exitCode = ratio >= TARGET_RATIO ? 0 : 1
} finally {
  server.kill('SIGTERM')
}
