// `pnpm bench`: requests per second and p99 latency of GET /api/v1/users/me with a Bearer
// token, beside a minimal route that verifies the same token with @fastify/jwt and reads one row
// (its target: within 10 %), and of an organization's alert list (`GET …/alerts?limit=20`, the
// product API), next to a bare Fastify hello-world measured in the same run on the same machine, and a second copy of
// that hello-world as a control (its ratio to the first is this run's noise) and as a yardstick
// that spends a fixed 10 µs of CPU per request (the ratio that much work reaches on this machine).
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'
import { processCpu } from './cpu.js'
import { median, pairedCpuRatio, pairedRatio, percent, roundRatios } from './stats.js'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
/**
 * Issue 57's target for /users/me: within 10 % of the minimal route that verifies the same token
 * and reads one row (its ratio to that route); issue 33's for the alert list, as a ratio to the
 * bare hello-world.
 */
const TARGETS = { authenticated: 0.9, list: 0.5 }

interface Targets {
  bare: string
  control: string
  yardstick: string
  yardstickMicroseconds: number
  platform: string
  minimal: string
  list: string
  token: string
}

const server = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', 'bench/api-server.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)))
  createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line) as Targets))
})

interface Sample {
  requestsPerSecond: number
  p99: number
  /** The server process's CPU time per answered request, in µs (Linux; NaN elsewhere). */
  cpuPerRequest: number
}

async function load(url: string, headers: Record<string, string>, duration: number): Promise<Sample> {
  const cpuBefore = processCpu(server.pid)
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration })
  const cpu = processCpu(server.pid) - cpuBefore
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99, cpuPerRequest: cpu / result.requests.total }
}

function summary(samples: Sample[]): Sample {
  const of = (pick: (sample: Sample) => number) => median(samples.map(pick))
  return {
    requestsPerSecond: of((sample) => sample.requestsPerSecond),
    p99: of((sample) => sample.p99),
    cpuPerRequest: of((sample) => sample.cpuPerRequest),
  }
}

try {
  const routes = {
    bare: { url: targets.bare, headers: {} },
    control: { url: targets.control, headers: {} },
    yardstick: { url: targets.yardstick, headers: {} },
    authenticated: { url: targets.platform, headers: { authorization: `Bearer ${targets.token}` } },
    minimal: { url: targets.minimal, headers: { authorization: `Bearer ${targets.token}` } },
    list: { url: targets.list, headers: { authorization: `Bearer ${targets.token}` } },
  }
  // Warm-up (JIT, the verified-session cache, keep-alive connections), then rounds that
  // alternate the routes (control and yardstick last), so drift in the machine's speed touches all alike.
  for (const route of Object.values(routes)) await load(route.url, route.headers, 2)
  const samples: Record<keyof typeof routes, Sample[]> = { bare: [], control: [], yardstick: [], authenticated: [], minimal: [], list: [] }
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const name of ['bare', 'minimal', 'authenticated', 'list', 'control', 'yardstick'] as const)
      samples[name].push(await load(routes[name].url, routes[name].headers, DURATION_SECONDS))
  }
  const bare = summary(samples.bare)
  const measured = [
    { name: 'minimal', label: 'baseline: @fastify/jwt verifies the token, one row by primary key (Bearer)' },
    { name: 'authenticated', label: 'GET /api/v1/users/me (Bearer)' },
    { name: 'list', label: 'GET /api/v1/organizations/:orgId/alerts?limit=20 (Bearer)' },
  ] as const
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_SECONDS} s per route (medians; the ratio is each round's, then their median), Node ${process.version}\n`,
  )
  console.log(
    "| route | requests/s | p99 latency (ms) | ratio to bare (target) | server CPU per request (µs) | bare's CPU per request over its |",
  )
  console.log('|---|---:|---:|---:|---:|---:|')
  console.log(`| bare Fastify GET /hello | ${bare.requestsPerSecond.toFixed(0)} | ${bare.p99} | | ${bare.cpuPerRequest.toFixed(0)} | |`)
  for (const { name, label } of measured) {
    const route = summary(samples[name])
    const ratio = pairedRatio(samples[name], samples.bare)
    const target = name === 'list' ? ` (${percent(TARGETS.list)})` : ''
    const cpuRatio = pairedCpuRatio(samples[name], samples.bare)
    console.log(
      `| ${label} | ${route.requestsPerSecond.toFixed(0)} | ${route.p99} | ${percent(ratio)}${target} | ${route.cpuPerRequest.toFixed(0)} | ${percent(cpuRatio)} |`,
    )
  }
  const ofMinimal = pairedRatio(samples.authenticated, samples.minimal)
  const listRatio = pairedRatio(samples.list, samples.bare)
  const met = ofMinimal >= TARGETS.authenticated && listRatio >= TARGETS.list
  console.log(
    `\n/users/me: ${percent(ofMinimal)} of the minimal route's requests/s (target ≥ ${percent(TARGETS.authenticated)}); alert list ${percent(listRatio)} of bare (target ≥ ${percent(TARGETS.list)}): ${met ? 'met' : 'NOT met'}`,
  )
  // Not a target: the noise of this run, on two servers whose code is the same.
  const control = summary(samples.control)
  console.log(
    `| control: the bare hello-world again (same code, 100 % if the machine were steady) | ${control.requestsPerSecond.toFixed(0)} | ${control.p99} | ${percent(pairedRatio(samples.control, samples.bare))} | ${control.cpuPerRequest.toFixed(0)} | ${percent(pairedCpuRatio(samples.control, samples.bare))} |`,
  )
  // Not a target either: what a route spending a fixed few µs more than bare reaches here, so a
  // reader can tell what a target leaves room for on this machine (docs/benchmarks.md).
  const yardstick = summary(samples.yardstick)
  console.log(
    `| yardstick: the bare hello-world spending ${targets.yardstickMicroseconds} µs of CPU per request | ${yardstick.requestsPerSecond.toFixed(0)} | ${yardstick.p99} | ${percent(pairedRatio(samples.yardstick, samples.bare))} | ${yardstick.cpuPerRequest.toFixed(0)} | ${percent(pairedCpuRatio(samples.yardstick, samples.bare))} |`,
  )
  for (const { name } of [...measured, { name: 'control' } as const, { name: 'yardstick' } as const])
    console.log(`\n${name} by round: ${roundRatios(samples[name], samples.bare).map(percent).join(', ')}`)
  process.exitCode = met ? 0 : 1
} finally {
  server.kill('SIGTERM')
}
