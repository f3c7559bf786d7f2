import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { membershipOf } from '@svc/auth'
import { pageOf } from '@svc/db'
import { ListResponse, Timestamp, invalidField } from '@svc/http'
import { listResults, statsFromRollups, statsFromRuns, type StatsRow } from '../queries/runs.js'
import { screenshotsOfRuns } from '../queries/screenshots.js'
import { CheckParams, MANAGED_BASE, Region, ResultStatusSchema, RunResult, tags, type StoredAttempt } from '../schemas.js'
import { checkOfRequest } from '../checks/access.js'
import { availabilityOf, percentUp as percent, type AvailabilityOptions } from './availability.js'
import { screenshotLink } from './screenshot-links.js'

export type ResultRouteOptions = AvailabilityOptions & {
  /** The product API's public base URL: screenshot links. */
  productUrl: string
}

const DAY_MS = 86_400_000
/** Ranges up to this long are computed from the raw runs (exact percentiles); longer ones from roll-ups. */
const RAW_RANGE_MS = 7 * DAY_MS

const Range = {
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
}

function rangeOf(query: { from?: string; to?: string }, defaultDays: number) {
  const to = query.to ? new Date(query.to) : new Date()
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - defaultDays * DAY_MS)
  if (from >= to) throw invalidField('from', 'must be before to', 'querystring')
  return { from, to }
}

const Bucket = Type.Object({
  start: Timestamp,
  region: Type.Union([Type.String(), Type.Null()], { description: 'Set when grouped by region' }),
  runs: Type.Integer(),
  failures: Type.Integer(),
  degraded: Type.Integer(),
  availability: Type.Union([Type.Number(), Type.Null()], { description: 'Percent of runs not failing' }),
  avgMs: Type.Union([Type.Number(), Type.Null()]),
  p50Ms: Type.Union([Type.Number(), Type.Null()]),
  p95Ms: Type.Union([Type.Number(), Type.Null()]),
  p99Ms: Type.Union([Type.Number(), Type.Null()]),
})

const rounded = (value: number | null) => (value === null ? null : Math.round(Number(value) * 100) / 100)

const bucketBody = (row: StatsRow) => ({
  start: new Date(row.bucket).toISOString(),
  region: row.region,
  runs: row.runs,
  failures: row.failures,
  degraded: row.degraded,
  availability: percent(row.runs, row.failures),
  avgMs: rounded(row.avgMs),
  p50Ms: rounded(row.p50Ms),
  p95Ms: rounded(row.p95Ms),
  p99Ms: rounded(row.p99Ms),
})

/** Reading a check's results: raw runs (paged), statistics per hour or day, and its SLA. */
export const resultRoutes: FastifyPluginAsyncTypebox<ResultRouteOptions> = async (app, options) => {
  const db = app.database.db
  const viewer = app.requireProductRole('synthetics', 'viewer')

  app.get(
    `${MANAGED_BASE}/checks/:checkId/results`,
    {
      schema: {
        tags,
        summary: 'A check’s results, newest first (synthetics viewer); raw results are kept SYNTHETICS_RETENTION_DAYS',
        params: CheckParams,
        querystring: Type.Object({
          ...Range,
          region: Type.Optional(Region),
          status: Type.Optional(ResultStatusSchema),
          page: Type.Integer({ minimum: 1, default: 1 }),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        }),
        response: { 200: ListResponse(RunResult) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const check = await checkOfRequest(db, request)
      const { page, limit, region, status } = request.query
      const from = request.query.from ? new Date(request.query.from) : undefined
      const to = request.query.to ? new Date(request.query.to) : undefined
      if (from && to && from >= to) throw invalidField('from', 'must be before to', 'querystring')
      const { organizationId } = membershipOf(request)
      const { rows, total } = await listResults(db, organizationId, check.id, { from, to, region, status }, pageOf({ page, limit }))
      const screenshots = await screenshotsOfRuns(
        db,
        organizationId,
        rows.map((row) => row.id),
      )
      const shotOf = new Map(screenshots.map((shot) => [`${shot.runId}/${shot.attempt}`, shot]))
      const linkOf = (runId: string, attempt: number) => {
        const screenshot = shotOf.get(`${runId}/${attempt}`)
        return screenshot ? { screenshotUrl: screenshotLink(options.productUrl, screenshot) } : {}
      }
      return {
        data: rows.map((row) => ({
          id: row.id,
          region: row.region,
          dueAt: row.dueAt.toISOString(),
          status: row.status as 'passing',
          totalMs: row.totalMs,
          statusCode: row.statusCode,
          error: row.error,
          relayId: row.relayId,
          startedAt: row.startedAt?.toISOString() ?? null,
          finishedAt: row.finishedAt?.toISOString() ?? null,
          attempts: ((row.attempts ?? []) as unknown as StoredAttempt[]).map((attempt, index) => ({
            ...attempt,
            ...linkOf(row.id, index),
          })),
        })),
        meta: { page, limit, total },
      }
    },
  )

  app.get(
    `${MANAGED_BASE}/checks/:checkId/stats`,
    {
      schema: {
        tags,
        summary:
          'Runs, failures, availability and response times per hour or day (synthetics viewer). Ranges up to 7 days inside retention come from the raw results; longer ones from roll-ups, whose percentiles across buckets are run-weighted means',
        params: CheckParams,
        querystring: Type.Object({
          ...Range,
          interval: Type.Enum(['hour', 'day'] as const, { default: 'hour' }),
          groupBy: Type.Optional(Type.Enum(['region'] as const)),
        }),
        response: {
          200: Type.Object({ source: Type.Enum(['results', 'rollups'] as const), interval: Type.String(), data: Type.Array(Bucket) }),
        },
      },
      onRequest: viewer,
    },
    async (request) => {
      const check = await checkOfRequest(db, request)
      const { interval, groupBy } = request.query
      const { from, to } = rangeOf(request.query, interval === 'hour' ? 1 : 30)
      const retained = from.getTime() >= Date.now() - options.retentionDays * DAY_MS
      const raw = retained && to.getTime() - from.getTime() <= RAW_RANGE_MS
      const rows = raw
        ? await statsFromRuns(db, check.id, interval, from, to, groupBy === 'region')
        : await statsFromRollups(db, check.id, interval, from, to, groupBy === 'region')
      return { source: raw ? ('results' as const) : ('rollups' as const), interval, data: rows.map(bucketBody) }
    },
  )

  app.get(
    `${MANAGED_BASE}/checks/:checkId/sla`,
    {
      schema: {
        tags,
        summary:
          'Availability over a range, leaving out the maintenance windows of the status page components the check is linked to (synthetics viewer)',
        params: CheckParams,
        querystring: Type.Object(Range),
        response: {
          200: Type.Object({
            from: Timestamp,
            to: Timestamp,
            runs: Type.Integer(),
            failures: Type.Integer(),
            availability: Type.Union([Type.Number(), Type.Null()], { description: 'Percent; null with no runs' }),
            excludedWindows: Type.Array(Type.Object({ from: Timestamp, to: Timestamp })),
          }),
        },
      },
      onRequest: viewer,
    },
    async (request) => {
      const check = await checkOfRequest(db, request)
      const { from, to } = rangeOf(request.query, 30)
      const { runs, failures, windows } = await availabilityOf(db, check, from, to, options)
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        runs,
        failures,
        availability: percent(runs, failures),
        excludedWindows: windows.map((window) => ({ from: window.from.toISOString(), to: window.to.toISOString() })),
      }
    },
  )
}
