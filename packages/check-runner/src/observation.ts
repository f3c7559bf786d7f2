import type { AssertionOutcome, StepResult, Timings } from './definitions.js'

/** What one attempt of any kind saw, before it is judged passing, degraded or failing. */
export interface Observation {
  timings: Timings
  statusCode?: number
  assertions: AssertionOutcome[]
  /** Set when the attempt failed for a reason other than an assertion. */
  error?: string
  details?: Record<string, unknown>
  steps?: StepResult[]
  /** A browser check's page as a PNG. */
  screenshot?: Buffer
}
