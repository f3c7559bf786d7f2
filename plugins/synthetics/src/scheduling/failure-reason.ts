import type { AssertionOutcome } from '@svc/check-runner'
import type { Json } from '@svc/db'
import { storedAttempts } from '../queries/runs.js'

/** How an assertion's comparison reads in a sentence. */
const SAID: Record<AssertionOutcome['comparison'], string> = {
  equals: 'equal to',
  notEquals: 'not equal to',
  contains: 'containing',
  notContains: 'not containing',
  greaterThan: 'greater than',
  lessThan: 'less than',
  matches: 'matching',
  isEmpty: 'empty',
  notEmpty: 'not empty',
}

const SOURCE: Record<AssertionOutcome['source'], string> = {
  statusCode: 'status code',
  responseTime: 'response time (ms)',
  header: 'header',
  jsonPath: 'JSON path',
  body: 'body',
}

/** "status code 503, expected equal to 200": what a failed assertion saw and wanted. */
export function describeAssertion(outcome: AssertionOutcome): string {
  const what = `${SOURCE[outcome.source]}${outcome.property ? ` ${outcome.property}` : ''}`
  const seen = outcome.actual === null ? 'absent' : outcome.actual.length > 80 ? `${outcome.actual.slice(0, 80)}…` : outcome.actual
  const wanted = `${SAID[outcome.comparison]}${outcome.target !== undefined ? ` ${outcome.target}` : ''}`
  return `${what} ${seen}, expected ${wanted}`
}

/**
 * Why a failing run failed, for the person paged: its error (a timeout, a refused connection, an
 * HTTP error with no assertions), else its last attempt's first failed assertion, else its status.
 */
export function failureReason(run: { statusCode: number | null; error: string | null; attempts: Json | null }): string {
  if (run.error) return run.error
  const last = run.attempts === null ? undefined : storedAttempts(run.attempts).at(-1)
  const failed = last?.assertions.find((outcome) => !outcome.passed)
  if (failed) return describeAssertion(failed)
  return run.statusCode !== null ? `HTTP ${run.statusCode}` : 'failing'
}
