import type { OutboundPolicy } from '@svc/outbound'
import type { BrowserRuntime } from './browser/runtime.js'
import type { AttemptResult, ResultStatus, RunnableCheck, Timings } from './definitions.js'
import { runDns } from './dns.js'
import { runHttp } from './http.js'
import { runMultiStep } from './multistep.js'
import type { Observation } from './observation.js'
import { runTcp } from './tcp.js'
import { runTls } from './tls.js'

/** Why a browser check fails on a runner without Chromium (the scheduler and relays keep them apart; a test run may not). */
export const NO_BROWSER = 'this runner has no Chromium: it runs no browser check'

function observe(check: RunnableCheck, policy: OutboundPolicy, browser: BrowserRuntime | undefined): Promise<Observation> {
  switch (check.kind) {
    case 'http':
      return runHttp(check.request, check.timeoutMs, policy)
    case 'multistep':
      return runMultiStep(check.request, check.timeoutMs, policy)
    case 'browser':
      if (!browser) return Promise.resolve({ timings: { total: 0 }, assertions: [], error: NO_BROWSER })
      return browser.run(check.request, check.timeoutMs, policy)
    case 'tcp':
      return runTcp(check.request, check.timeoutMs, policy)
    case 'dns':
      return runDns(check.request, check.timeoutMs, policy)
    case 'tls':
      return runTls(check.request, check.timeoutMs, policy)
  }
}

/** Timings to a hundredth of a millisecond, without the phases that did not happen. */
function rounded(timings: Timings): Timings {
  return Object.fromEntries(
    Object.entries(timings)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, Math.round((value as number) * 100) / 100]),
  ) as Timings
}

/** Failing when anything failed; degraded when it passed slower than the degraded threshold. */
export function judge(observation: Observation, degradedMs: number | null): ResultStatus {
  if (observation.error !== undefined || observation.assertions.some((outcome) => !outcome.passed)) return 'failing'
  if (degradedMs !== null && observation.timings.total > degradedMs) return 'degraded'
  return 'passing'
}

/** One attempt, judged. */
export async function attempt(check: RunnableCheck, policy: OutboundPolicy, browser?: BrowserRuntime): Promise<AttemptResult> {
  const startedAt = new Date().toISOString()
  const observation = await observe(check, policy, browser)
  const timings = rounded(observation.timings)
  return {
    status: judge(observation, check.degradedMs),
    startedAt,
    timings,
    ...(observation.statusCode !== undefined ? { statusCode: observation.statusCode } : {}),
    assertions: observation.assertions,
    ...(observation.error !== undefined ? { error: observation.error.slice(0, 2000) } : {}),
    ...(observation.details ? { details: observation.details } : {}),
    ...(observation.steps ? { steps: observation.steps.map((step) => ({ ...step, timings: rounded(step.timings) })) } : {}),
    ...(observation.screenshot ? { screenshot: observation.screenshot.toString('base64') } : {}),
  }
}

/**
 * A run: attempts until one does not fail, at most `retries + 1` (a failure counts only when
 * every retry failed too). The run's status is its last attempt's.
 */
export async function runCheck(
  check: RunnableCheck,
  policy: OutboundPolicy,
  browser?: BrowserRuntime,
): Promise<{ status: ResultStatus; attempts: AttemptResult[] }> {
  const attempts: AttemptResult[] = []
  for (let index = 0; index <= check.retries; index++) {
    const result = await attempt(check, policy, browser)
    attempts.push(result)
    if (result.status !== 'failing') break
  }
  return { status: attempts.at(-1)!.status, attempts }
}
