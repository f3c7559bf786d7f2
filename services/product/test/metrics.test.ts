import t from 'tap'
import { startMetricsServer } from '@svc/metrics'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

// METRICS_PORT set: requests are timed, and GET /metrics answers on a listener of its own.
const service = await startTestService(t, buildApp, { config: { metricsPort: 0 } })
const metrics = await startMetricsServer(0, '127.0.0.1')
t.teardown(() => metrics.close())
const { orgId, person } = await alertingOrganization(service, 'metrics', {})
const { createConfig, ingest } = insightsHelpers(service, orgId, person('owner'))

async function scrape(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metrics.port}/metrics`)
  if (response.status !== 200) throw new Error(`scrape answered ${response.status}`)
  t.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  return response.text()
}

/** The value of one series in a scrape, 0 when absent. */
function valueOf(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

t.test('requests are counted and timed by route template, never by raw URL', async (t) => {
  const before = await scrape()
  const series = 'http_request_duration_seconds_count{service="product",method="GET",route="/api/v1/health",status_code="200"}'
  for (let request = 0; request < 3; request += 1) await service.app.inject({ method: 'GET', url: '/api/v1/health' })
  await service.app.inject({ method: 'GET', url: `/api/v1/organizations/${orgId}/alerts/not-a-uuid`, headers: person('owner').headers })
  const after = await scrape()
  t.equal(valueOf(after, series) - valueOf(before, series), 3)
  t.match(after, /route="\/api\/v1\/organizations\/:orgId\/alerts\/:alertId"/, 'the template, not the id')
  t.notMatch(after, /not-a-uuid/)
  t.match(after, /http_request_duration_seconds_bucket\{le="0\.005",service="product"/, 'a latency histogram')
})

t.test('ingested events are counted by format and outcome, retries apart', async (t) => {
  const config = await createConfig({ name: 'Metrics' })
  const created = 'ingested_events_total{source="generic",outcome="created"}'
  const deduplicated = 'ingested_events_total{source="generic",outcome="deduplicated"}'
  const before = await scrape()
  await ingest(config, { title: 'Queue backed up', fingerprint: 'metrics-queue' })
  await ingest(config, { title: 'Queue backed up', fingerprint: 'metrics-queue' })
  const after = await scrape()
  t.equal(valueOf(after, created) - valueOf(before, created), 1)
  t.equal(valueOf(after, deduplicated) - valueOf(before, deduplicated), 1)
})

t.test('the job queue reports its depth and failures, and process metrics are there', async (t) => {
  await service.app.jobs.createQueue('metrics-probe')
  await service.app.jobs.send('metrics-probe', { n: 1 }, { startAfter: 3600 })
  const text = await scrape()
  t.equal(valueOf(text, 'job_queue_jobs{queue="metrics-probe",state="created"}'), 1, 'one job waiting')
  t.match(text, /# TYPE job_queue_errors_total counter/)
  t.match(text, /# TYPE analyses_total counter/)
  t.match(text, /# TYPE outbox_deliveries_total counter/)
  t.match(text, /process_resident_memory_bytes/)
})

t.test('the metrics listener answers GET /metrics only', async (t) => {
  const response = await fetch(`http://127.0.0.1:${metrics.port}/`)
  t.equal(response.status, 404)
  await response.body?.cancel()
})
