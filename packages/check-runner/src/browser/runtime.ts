import { existsSync } from 'node:fs'
import type { OutboundPolicy } from '@svc/outbound'
import type { BrowserRequest } from '../definitions.js'
import { runBrowser, type BrowserObservation, type BrowserOptions } from './run-browser.js'

/** Debian's Chromium: where `apt-get install chromium` puts it. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium'

/** A runner's browser: runs browser checks, at most `concurrency` at once (each is a Chromium). */
export interface BrowserRuntime {
  readonly executablePath: string
  run(spec: BrowserRequest, timeoutMs: number, policy: OutboundPolicy): Promise<BrowserObservation>
}

/**
 * The browser of a runner (the service's scheduler, a relay), or undefined when Chromium is not
 * at `executablePath`: that runner then runs no browser check, and says so. Runs past
 * `concurrency` wait their turn; a Chromium takes most of a core while a page loads, so a 2-core
 * machine runs two. Chromium refuses its own sandbox to root, as in most containers:
 * there it runs with `--no-sandbox`, and the runner's confinement (the egress proxy, the
 * script's process) is what holds.
 */
export function browserRuntime(executablePath: string, concurrency: number): BrowserRuntime | undefined {
  if (!existsSync(executablePath)) return undefined
  const options: BrowserOptions = { executablePath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] }
  let running = 0
  const waiting: Array<() => void> = []
  const turn = () => (running < concurrency ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)))
  return {
    executablePath,
    async run(spec, timeoutMs, policy) {
      await turn()
      running += 1
      try {
        return await runBrowser(spec, timeoutMs, policy, options)
      } finally {
        running -= 1
        waiting.shift()?.()
      }
    },
  }
}
