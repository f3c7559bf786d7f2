import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The process's metrics, in one registry: prom-client's idiom is metrics defined once per
 * process, and a process may hold both services (`pnpm start`), hence the `service` label.
 * Counting is always on (an increment costs next to nothing); serving them, timing every
 * request and sampling the process, only with METRICS_PORT.
 */
export const registry = new Registry()

let processMetrics = false
/**
 * Node's own metrics (CPU, memory, event-loop delay, GC), from the first scrape listener on:
 * their GC observer and event-loop sampler cost something, so not without METRICS_PORT.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return
  processMetrics = true
  collectDefaultMetrics({ register: registry })
}

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by service, method, route template and status code; its _count is the request rate',
  labelNames: ['service', 'method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
})

export const ingestedEvents = new Counter({
  name: 'ingested_events_total',
  help: 'Webhook events ingested, by source format and outcome (created, deduplicated, acknowledged, resolved, ignored, retried)',
  labelNames: ['source', 'outcome'] as const,
  registers: [registry],
})

export const dispatchWaits = new Counter({
  name: 'alert_dispatch_waits_total',
  help: 'Claims of the alert event dispatcher that first waited for urgent alerts being written (at most one commit each)',
  registers: [registry],
})

export const analysesFinished = new Counter({
  name: 'analyses_total',
  help: 'AI analysis attempts by outcome (completed, retry_scheduled, failed)',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

export const outboxDeliveries = new Counter({
  name: 'outbox_deliveries_total',
  help: 'Outbound message delivery attempts by channel and outcome (sent, retry, failed, held)',
  labelNames: ['channel', 'outcome'] as const,
  registers: [registry],
})

export const jobQueueErrors = new Counter({
  name: 'job_queue_errors_total',
  help: 'Errors the job queue raised in the background (polling, maintenance)',
  registers: [registry],
})

/** Jobs in one queue and state, as the job queue reports them at a scrape. */
export interface JobCount {
  queue: string
  state: string
  count: number
}

const jobSources = new Set<() => Promise<JobCount[]>>()

/**
 * Counts the job queue's jobs on every scrape (`job_queue_jobs{queue,state}`: created and
 * retry are the depth, failed the failures kept); the returned function stops it.
 */
export function trackJobQueue(countJobs: () => Promise<JobCount[]>): () => void {
  jobSources.add(countJobs)
  return () => void jobSources.delete(countJobs)
}

new Gauge({
  name: 'job_queue_jobs',
  help: 'Jobs in the job queue by queue and state (created, retry, active, failed)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    for (const countJobs of jobSources) {
      for (const { queue, state, count } of await countJobs()) this.inc({ queue, state }, count)
    }
  },
})
