import { spawn } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, sep } from 'node:path'
import type { OutboundPolicy } from '@svc/outbound'
import type { RunnableBrowserRequest } from '../definitions.js'
import type { Observation } from '../observation.js'
import { startEgressProxy } from './egress-proxy.js'

/** Where the runner finds Chromium, and what it adds to its command line. */
export interface BrowserOptions {
  /** Debian's `/usr/bin/chromium` unless configured. */
  executablePath: string
  /** Extra arguments: `--no-sandbox` where the kernel gives Chromium's own sandbox nothing to use. */
  args?: readonly string[]
}

/** The heap a script's process may use, and the JavaScript heap of each of Chromium's renderers. */
export const SCRIPT_HEAP_MB = 128
export const RENDERER_HEAP_MB = 256

/**
 * Chromium asks Google for updates, sign-in and autofill on its own: a check's browser talks only
 * to what its page loads (and the egress proxy would refuse the rest, as noise among the failed requests).
 */
const QUIET_BROWSER = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--no-first-run',
  '--disable-features=AutofillServerCommunication,OptimizationHints,MediaRouter,Translate',
]

/** A step of a script (`test.step`), as it ran. */
export interface BrowserStep {
  name: string
  status: 'passing' | 'failing'
  startedMs: number
  durationMs: number
}

/** What one run of a browser check saw, with its screenshot (on failure, or always when asked). */
export type BrowserObservation = Observation

interface ScriptResult {
  error?: string
  durationMs: number
  url: string
  steps: BrowserStep[]
  consoleErrors: string[]
  failedRequests: Array<{ url: string; status?: number; failure?: string }>
  vitals: Record<string, number>
  screenshot?: string
}

const require = createRequire(import.meta.url)
const SANDBOX_SCRIPT = realpathSync(require.resolve('@svc/check-runner/sandbox/browser-script.mjs'))

/**
 * What the script's process may read: its own package, and the directory Playwright's packages
 * are installed in (pnpm's store, or the nearest `node_modules`), and the three files
 * Playwright reads to tell whether it runs under WSL. Nothing of the runner's: its data, its
 * configuration, `/proc` (which would show the runner's environment).
 */
function readablePaths(): string[] {
  const installedIn = (name: string) => {
    const real = realpathSync(dirname(require.resolve(`${name}/package.json`)))
    const store = real.lastIndexOf(`${sep}.pnpm${sep}`)
    if (store >= 0) return real.slice(0, store + `${sep}.pnpm`.length)
    return real.slice(0, real.lastIndexOf(`${sep}node_modules${sep}`) + `${sep}node_modules`.length)
  }
  return [dirname(dirname(SANDBOX_SCRIPT)), ...new Set([installedIn('playwright-core'), installedIn('@playwright/test')])]
    .map((path) => `${path}${sep}*`)
    .concat(['/proc/version', '/proc/sys/fs/binfmt_misc/WSLInterop', '/run/WSL'])
}

/**
 * What a run keeps, with each secret's value written `[secret NAME]`: a failed expectation, a
 * console line or a URL may show what the script typed, and results are read by every viewer.
 */
function hideSecrets(secrets: Record<string, string>) {
  const values = Object.entries(secrets)
    .filter(([, value]) => value.length > 0)
    .sort(([, a], [, b]) => b.length - a.length)
  const text = (value: string) => values.reduce((hidden, [name, secret]) => hidden.replaceAll(secret, `[secret ${name}]`), value)
  const hidden = <T>(value: T): T => {
    if (typeof value === 'string') return text(value) as T
    if (Array.isArray(value)) return value.map(hidden) as T
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, hidden(entry)])) as T
    return value
  }
  return hidden
}

/**
 * One run of a browser check (issue 59; decision 0016, "Browser checks"). Chromium is launched
 * here, headless, its only way out the egress proxy (the outbound rule on every connection); the
 * script runs in a process of its own under Node's permission model (sandbox/browser-script.mjs)
 * that drives it over Playwright's WebSocket. The run ends at the check's timeout: the script's
 * process is killed and Chromium closed.
 */
export async function runBrowser(
  spec: RunnableBrowserRequest,
  timeoutMs: number,
  policy: OutboundPolicy,
  options: BrowserOptions,
): Promise<BrowserObservation> {
  const started = performance.now()
  // Loaded with the first browser check: most runners never run one.
  const { chromium } = await import('playwright-core')
  const proxy = await startEgressProxy(policy)
  const server = await chromium
    .launchServer({
      executablePath: options.executablePath,
      headless: true,
      args: [...QUIET_BROWSER, ...(options.args ?? []), `--js-flags=--max-old-space-size=${RENDERER_HEAP_MB}`],
      // Loopback too: Chromium would otherwise reach it directly.
      proxy: { server: proxy.url, bypass: '<-loopback>' },
    })
    .catch(async (error: Error) => {
      await proxy.close()
      throw error
    })
  try {
    const result = await new Promise<ScriptResult | { error: string }>((resolve) => {
      // Through `env -i`: the process starts with no environment at all, whatever a wrapper of
      // `spawn` (a test runner's, an APM agent's) adds, such as NODE_OPTIONS preloading code.
      const child = spawn(
        '/usr/bin/env',
        [
          '-i',
          process.execPath,
          '--experimental-permission',
          ...readablePaths().map((path) => `--allow-fs-read=${path}`),
          `--max-old-space-size=${SCRIPT_HEAP_MB}`,
          '--no-warnings',
          SANDBOX_SCRIPT,
        ],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (stderr = `${stderr}${chunk.toString()}`.slice(-2000)))
      const limit = setTimeout(() => {
        child.kill('SIGKILL')
        resolve({ error: `timed out after ${timeoutMs} ms` })
      }, timeoutMs)
      child.on('exit', (code) => {
        clearTimeout(limit)
        try {
          resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ScriptResult)
        } catch {
          // Node's last line names its version: the error is the line that names a code, or the first.
          const lines = stderr.trim().split('\n')
          const why = lines.find((line) => /^\w*Error\b|code: '/.test(line.trim())) ?? lines[0] ?? ''
          resolve({ error: `the script's process ended (${code ?? 'killed'}) without a result: ${why.trim()}` })
        }
      })
      child.stdin.end(
        JSON.stringify({
          wsEndpoint: server.wsEndpoint(),
          script: spec.script,
          secrets: spec.secrets ?? {},
          viewport: spec.viewport,
          screenshotOnSuccess: spec.screenshotOnSuccess ?? false,
          timeoutMs,
        }),
      )
    })
    const total = performance.now() - started
    const hidden = hideSecrets(spec.secrets ?? {})
    if (!('durationMs' in result)) return { timings: { total }, assertions: [], error: hidden(result.error) }
    // The page's own requests the proxy refused say why (Chromium's own background requests are left out).
    const reasonFor = (url: string) => {
      const host = new URL(url).host
      return proxy.refused.find((entry) => new URL(entry.url).host.replace(/:443$/, '') === host.replace(/:443$/, ''))?.reason
    }
    const failedRequests = result.failedRequests.map((request) => {
      const reason = request.status === undefined || request.status === 403 ? reasonFor(request.url) : undefined
      return reason ? { url: request.url, failure: `refused: ${reason}` } : request
    })
    return {
      timings: { total },
      assertions: [],
      ...(result.error !== undefined ? { error: hidden(result.error) } : {}),
      details: hidden({
        url: result.url,
        scriptMs: result.durationMs,
        steps: result.steps,
        consoleErrors: result.consoleErrors,
        failedRequests,
        vitals: result.vitals,
      }),
      ...(result.screenshot ? { screenshot: Buffer.from(result.screenshot, 'base64') } : {}),
    }
  } finally {
    await server.close().catch(() => undefined)
    await proxy.close()
  }
}
