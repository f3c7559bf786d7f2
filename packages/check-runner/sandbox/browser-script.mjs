// The process a browser check's script runs in (issue 59; decision 0016, "Browser checks"),
// started by src/browser/run-browser.ts under Node's permission model: it reads only the code it
// runs, writes nothing, starts no process, thread or add-on, and has no environment. It drives a
// Chromium the runner launched (over Playwright's WebSocket), runs the owner's script with
// `page`, `context`, `expect` (@playwright/test's), `test.step` and the check's `secrets` it names,
// and writes one JSON line:
// the outcome, each step's time, console errors, failed requests, Web Vitals and a screenshot.
// Plain JavaScript: it is started by `node` itself, with no loader, in the runner's image too.
/* global process, performance, PerformanceObserver, setTimeout -- Node's, and the page's inside page.evaluate */
import dgram from 'node:dgram'
import { createRequire } from 'node:module'
import net from 'node:net'

const require = createRequire(import.meta.url)
const { chromium } = require('playwright-core')
const { expect } = require('@playwright/test')

const SCREENSHOT_LIMIT = 2 * 1024 * 1024

let input = ''
for await (const chunk of process.stdin) input += chunk
const { wsEndpoint, script, secrets, viewport, screenshotOnSuccess, timeoutMs } = JSON.parse(input)

const started = performance.now()
const since = () => Math.round((performance.now() - started) * 100) / 100
const steps = []
const consoleErrors = []
const failedRequests = []
const browser = await chromium.connect(wsEndpoint)

// From here the process opens no connection: the script reaches the network only through the
// page, whose Chromium goes through the runner's egress proxy (the outbound rule). Node's
// permission model already refuses files, processes, threads and add-ons; built-in modules are
// one per process, so a module the script imports is the one closed here.
const closed = () => {
  throw new Error('a browser check’s script opens no connection of its own: the page does')
}
net.Socket.prototype.connect = closed
net.Server.prototype.listen = closed
for (const method of ['bind', 'connect', 'send']) dgram.Socket.prototype[method] = closed
for (const name of ['fetch', 'WebSocket', 'EventSource']) delete globalThis[name]
const context = await browser.newContext({ viewport: viewport ?? { width: 1280, height: 720 } })
context.setDefaultTimeout(Math.max(1000, Math.floor(timeoutMs / 2)))
const page = await context.newPage()
page.on('console', (message) => {
  if (message.type() === 'error' && consoleErrors.length < 50) consoleErrors.push(message.text().slice(0, 500))
})
page.on('pageerror', (error) => {
  if (consoleErrors.length < 50) consoleErrors.push(String(error.message ?? error).slice(0, 500))
})
page.on('requestfailed', (request) => {
  if (failedRequests.length < 50)
    failedRequests.push({ url: request.url().slice(0, 500), failure: request.failure()?.errorText ?? 'failed' })
})
page.on('response', (response) => {
  if (response.status() >= 400 && failedRequests.length < 50)
    failedRequests.push({ url: response.url().slice(0, 500), status: response.status() })
})

/** A named part of the script, timed (Playwright Test's `test.step`). */
async function step(name, body) {
  const entry = { name: String(name).slice(0, 100), startedMs: since(), durationMs: 0, status: 'passing' }
  steps.push(entry)
  try {
    return await body()
  } catch (error) {
    entry.status = 'failing'
    throw error
  } finally {
    entry.durationMs = Math.round((since() - entry.startedMs) * 100) / 100
  }
}

/** First Contentful Paint, Largest Contentful Paint and Cumulative Layout Shift, where the page reported them. */
async function webVitals() {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const vitals = {}
        const paint = performance.getEntriesByName('first-contentful-paint')[0]
        if (paint) vitals.fcpMs = Math.round(paint.startTime)
        let cls = 0
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) if (!entry.hadRecentInput) cls += entry.value
          vitals.cls = Math.round(cls * 1000) / 1000
        }).observe({ type: 'layout-shift', buffered: true })
        new PerformanceObserver((list) => {
          const last = list.getEntries().at(-1)
          if (last) vitals.lcpMs = Math.round(last.startTime)
        }).observe({ type: 'largest-contentful-paint', buffered: true })
        // Buffered entries are delivered in a task of their own.
        setTimeout(() => resolve(vitals), 0)
      }),
  )
}

async function screenshot() {
  try {
    const png = await page.screenshot({ fullPage: true, type: 'png', timeout: 5000 })
    return png.length <= SCREENSHOT_LIMIT ? png.toString('base64') : undefined
  } catch {
    return undefined
  }
}

let error
try {
  const AsyncFunction = (async () => {}).constructor
  await new AsyncFunction('page', 'context', 'expect', 'test', 'step', 'secrets', script)(
    page,
    context,
    expect,
    { step },
    step,
    Object.freeze({ ...secrets }),
  )
} catch (caught) {
  // Playwright's messages carry ANSI colours and a call log: the first lines say what failed.
  error = String(caught?.message ?? caught)
    // eslint-disable-next-line no-control-regex -- the escape that starts an ANSI colour
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .slice(0, 6)
    .join('\n')
    .slice(0, 2000)
}
const vitals = await webVitals().catch(() => ({}))
const shot = error !== undefined || screenshotOnSuccess ? await screenshot() : undefined
process.stdout.write(
  `${JSON.stringify({ error, durationMs: since(), url: page.url().slice(0, 2000), steps, consoleErrors, failedRequests, vitals, screenshot: shot })}\n`,
)
await browser.close().catch(() => {})
process.exit(0)
