// `pnpm bench`: requests per second and p99 latency of GET /api/v1/users/me with a Bearer
// token, next to a bare Fastify hello-world measured in the same run on the same machine.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const TARGET_RATIO = 0.5

interface Targets {
  bare: string
  platform: string
  token: string
}

const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench-server.ts'], { stdio: ['ignore', 'pipe', 'inherit'] })
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)))
  createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line) as Targets))
})

async function measure(url: string, headers: Record<string, string> = {}) {
  // A short warm-up first: JIT, caches (the verified token, the user row), connections.
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 })
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_SECONDS })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99 }
}

try {
  const bare = await measure(targets.bare)
  const authenticated = await measure(targets.platform, { authorization: `Bearer ${targets.token}` })
  const ratio = authenticated.requestsPerSecond / bare.requestsPerSecond
  console.log(`\n${CONNECTIONS} connections, ${DURATION_SECONDS} s each, Node ${process.version}\n`)
  console.log('| route | requests/s | p99 latency (ms) |')
  console.log('|---|---:|---:|')
  console.log(`| bare Fastify GET /hello | ${bare.requestsPerSecond.toFixed(0)} | ${bare.p99} |`)
  console.log(`| GET /api/v1/users/me (Bearer) | ${authenticated.requestsPerSecond.toFixed(0)} | ${authenticated.p99} |`)
  console.log(`\nratio: ${(ratio * 100).toFixed(1)}% of the bare baseline (target ${TARGET_RATIO * 100}%)`)
  process.exitCode = ratio >= TARGET_RATIO ? 0 : 1
} finally {
  server.kill('SIGTERM')
}
