// `pnpm bench:browser`: what one browser check run costs (issue 59; docs/sizing.md). The runner
// signs in to a small shop on loopback and places an order, BENCH_BROWSER_RUNS times (20), one
// run at a time, in Debian's Chromium, exactly as the service and relays run it (runBrowser with
// its egress proxy and sandboxed script process). Beside it, in the same run, the baseline: an
// HTTP check of the same shop's page by the same runner. Reports per run: wall time, CPU-seconds
// (the runner, its script process and Chromium with every process it started) and the memory
// they held at the peak (proportional set size, so pages Chromium's processes share are counted
// once), and the ratio of a browser run's CPU to an HTTP check's.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { browserRuntime, DEFAULT_CHROMIUM_PATH, runCheck, type RunnableCheck } from '@svc/check-runner'
import { processCpu } from './cpu.js'

const RUNS = Number(process.env.BENCH_BROWSER_RUNS ?? 20)
const HTTP_RUNS = 500
const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH
const TICK_MICROSECONDS = 10_000

const browser = browserRuntime(CHROMIUM, 1)
if (!browser) {
  console.error(`${CHROMIUM} is not installed (apt-get install -y chromium): nothing to measure`)
  process.exit(1)
}

// The shop answers in a process of its own: its work is not the runner's.
const shop = spawn(
  process.execPath,
  [
    '-e',
    `const page = (body) => '<!doctype html><html><body>' + body + '</body></html>'
     const s = require('node:http').createServer((q, r) => {
       let body = ''; q.on('data', (c) => (body += c)); q.on('end', () => {
         const html = (content) => r.writeHead(200, { 'content-type': 'text/html' }).end(page(content))
         if (q.url === '/') return html('<form method="post" action="/login"><label>Email <input name="email"></label><label>Password <input name="password" type="password"></label><button>Sign in</button></form>')
         if (q.url === '/login') return r.writeHead(303, { location: '/account', 'set-cookie': 'session=s1; Path=/' }).end()
         if (q.url === '/account') return html('<h1>Welcome, Ana</h1><button id="order">Place order</button><p id="result"></p><script>document.getElementById("order").onclick = async () => { const a = await fetch("/api/order", { method: "POST" }); if (a.ok) document.getElementById("result").textContent = "Order placed" }</script>')
         if (q.url === '/api/order') return r.writeHead(200).end()
         r.writeHead(404).end()
       })
     }); s.listen(0, '127.0.0.1', () => console.log(s.address().port))`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const port = ((await createInterface({ input: shop.stdout })[Symbol.asyncIterator]().next()).value as string).trim()
const shopUrl = `http://127.0.0.1:${port}`
const policy = { allowPrivateTargets: true }
const script = `
await test.step('sign in', async () => {
  await page.goto('${shopUrl}/')
  await page.getByLabel('Email').fill('ana@example.com')
  await page.getByLabel('Password').fill('open sesame')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Welcome, Ana' })).toBeVisible()
})
await test.step('place an order', async () => {
  await page.getByRole('button', { name: 'Place order' }).click()
  await expect(page.locator('#result')).toHaveText('Order placed')
})`

/** CPU of this process's children that ended and were waited for (the script's process, Chromium and what Chromium waited for), in µs. */
function endedChildrenCpu(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[13]) + Number(fields[14])) * TICK_MICROSECONDS
}

/** This process's descendants now (not the shop's process). */
function descendants(): number[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      parents.set(Number(entry), Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]))
    } catch {
      // It ended meanwhile.
    }
  }
  const found = new Set([process.pid])
  for (let grown = true; grown;) {
    grown = false
    for (const [pid, parent] of parents)
      if (!found.has(pid) && found.has(parent) && pid !== shop.pid) {
        found.add(pid)
        grown = true
      }
  }
  found.delete(process.pid)
  return [...found]
}

/** Proportional set size of these processes together, in KB. */
function pss(pids: readonly number[]): number {
  let total = 0
  for (const pid of pids) {
    try {
      total += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0)
    } catch {
      // It ended meanwhile.
    }
  }
  return total
}

const selfPss = () => pss([process.pid])
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!

// The baseline: an HTTP check of the shop's sign-in page, as many times, one at a time.
const http: RunnableCheck = { kind: 'http', request: { url: `${shopUrl}/` }, timeoutMs: 5000, degradedMs: null, retries: 0 }
for (let index = 0; index < 20; index++) await runCheck(http, policy)
const httpCpuBefore = processCpu(process.pid)
const httpStarted = performance.now()
for (let index = 0; index < HTTP_RUNS; index++) await runCheck(http, policy)
const httpCpuMs = (processCpu(process.pid) - httpCpuBefore) / 1000 / HTTP_RUNS
const httpWallMs = (performance.now() - httpStarted) / HTTP_RUNS

// The browser runs: one first to load Playwright and warm the disk cache, then the measured ones.
const check: RunnableCheck = { kind: 'browser', request: { script }, timeoutMs: 30_000, degradedMs: null, retries: 0 }
const warm = await runCheck(check, policy, browser)
if (warm.status !== 'passing') throw new Error(`the script does not pass: ${warm.attempts[0]?.error}`)
const walls: number[] = []
const cpus: number[] = []
const peaks: number[] = []
const runnerPss = selfPss()
for (let index = 0; index < RUNS; index++) {
  const cpuBefore = processCpu(process.pid) + endedChildrenCpu()
  let peak = 0
  const sampler = setInterval(() => (peak = Math.max(peak, pss(descendants()))), 50)
  const started = performance.now()
  const run = await runCheck(check, policy, browser)
  walls.push(performance.now() - started)
  clearInterval(sampler)
  if (run.status !== 'passing') throw new Error(`run ${index} failed: ${run.attempts[0]?.error}`)
  cpus.push((processCpu(process.pid) + endedChildrenCpu() - cpuBefore) / 1000)
  peaks.push(peak / 1024)
}
// What a run costs before its script does anything: Chromium's start and stop, the script's process.
const blank: RunnableCheck = { ...check, request: { script: "await page.goto('about:blank')" } }
const blankCpus: number[] = []
for (let index = 0; index < 5; index++) {
  const cpuBefore = processCpu(process.pid) + endedChildrenCpu()
  await runCheck(blank, policy, browser)
  blankCpus.push((processCpu(process.pid) + endedChildrenCpu() - cpuBefore) / 1000)
}
shop.kill()

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length
const browserCpuMs = mean(cpus)
console.log(`browser check cost, ${new Date().toISOString().slice(0, 10)}, ${RUNS} runs of a sign-in and an order, one at a time`)
console.log(`  wall time per run      p50 ${percentile(walls, 0.5).toFixed(0)} ms   p95 ${percentile(walls, 0.95).toFixed(0)} ms`)
console.log(
  `  CPU per run            ${(browserCpuMs / 1000).toFixed(2)} CPU-s (mean; p95 ${(percentile(cpus, 0.95) / 1000).toFixed(2)}): runner, script process, Chromium`,
)
console.log(`  of which the start      ${(mean(blankCpus) / 1000).toFixed(2)} CPU-s: a run whose script only opens about:blank (mean of 5)`)
console.log(
  `  memory at the peak     ${percentile(peaks, 0.5).toFixed(0)} MB PSS (p50; max ${Math.max(...peaks).toFixed(0)}) of Chromium and the script process, beside the runner's own ${(runnerPss / 1024).toFixed(0)} MB`,
)
console.log(`  baseline: HTTP check   ${httpCpuMs.toFixed(2)} ms CPU, ${httpWallMs.toFixed(2)} ms wall (mean of ${HTTP_RUNS})`)
console.log(`  ratio                  a browser run costs ${Math.round(browserCpuMs / httpCpuMs)}× an HTTP check's CPU`)
