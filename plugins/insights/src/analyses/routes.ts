import type { AiConfig } from '@svc/config'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid, membershipOf } from '@svc/auth'
import { BudgetExceededError, ConflictError, ListResponse, NotFoundError } from '@svc/http'
import { severities } from '@svc/ai'
import { analysisStatistics, findAnalysis, listAnalyses, listAnalysisEvents } from '../queries/analyses.js'
import { analysisKeyOf, subjectOf } from '../investigation/subject.js'
import { requestAnalysis } from './request.js'
import { pageOf } from '@svc/db'
import {
  Insight,
  InsightEvent,
  InsightParams,
  InsightQuery,
  InsightRequest,
  InsightStats,
  OrgParams,
  StatsQuery,
  analysisStatuses,
  insightBody,
  insightEventBody,
} from './schemas.js'

const tags = ['insights']

/** What the worker is told when a request queued a job, so it fetches at once instead of at its next poll. */
export type WakeWorker = () => void

/**
 * Incident insights (AI analyses): reading needs the insights role viewer; requesting one,
 * responder. An analysis is asked for by incident reference (surface and id) and processed by a
 * job; the answer is 202 with the pending analysis.
 */
export const insightRoutes: FastifyPluginAsyncTypebox<{ ai: AiConfig; wakeWorker: WakeWorker }> = async (app, options) => {
  const db = app.database.db
  const viewer = app.requireProductRole('insights', 'viewer')
  const responder = app.requireProductRole('insights', 'responder')

  app.get(
    '/api/v1/organizations/:orgId/insights',
    {
      schema: {
        tags,
        summary: 'List analyses, newest first (insights viewer)',
        params: OrgParams,
        querystring: InsightQuery,
        response: { 200: ListResponse(Insight) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, ...filter } = request.query
      const { rows, total } = await listAnalyses(db, membershipOf(request).organizationId, filter, pageOf({ page, limit }))
      return { data: rows.map(insightBody), meta: { page, limit, total } }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/insights',
    {
      schema: {
        tags,
        summary: 'Request an investigation of an alert or incident (insights responder)',
        description:
          'With `sourceProduct: alerting`, `incidentId` is an incident of alerting (INC-n: all its alerts and services are investigated) or an alert; an alert that is in an incident is analyzed as its incident, and the analysis answers with the incident’s id. One active analysis per incident: while one is pending or processing, another request is a 409. When the usage budget is spent: 402 BUDGET_EXCEEDED.',
        params: OrgParams,
        body: InsightRequest,
        response: { 202: Insight },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const key = await analysisKeyOf(db, {
        organizationId,
        sourceProduct: request.body.sourceProduct,
        incidentId: request.body.incidentId,
      })
      const subject = await subjectOf(db, key)
      if (!subject) throw new NotFoundError('incident')
      const result = await requestAnalysis(app.database, app.jobs, options.ai, key, {
        trigger: 'manual',
        requestedBy: request.user.userId,
        subject: subject.kind,
      })
      if (result.outcome === 'budget_exceeded')
        throw new BudgetExceededError(`the organization's monthly AI ${result.limit} limit is reached`)
      if (result.outcome !== 'requested') {
        const active = result.outcome === 'already_active' && result.analysisId ? ` (${result.analysisId})` : ''
        throw new ConflictError(`the incident already has an active analysis${active}`)
      }
      options.wakeWorker()
      return reply.code(202).send(insightBody(result.analysis))
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/insights/stats',
    {
      schema: {
        tags,
        summary: 'Counts by status and severity, mean time to completion, tokens used (insights viewer)',
        params: OrgParams,
        querystring: StatsQuery,
        response: { 200: InsightStats },
      },
      onRequest: viewer,
    },
    async (request) => {
      const stats = await analysisStatistics(db, membershipOf(request).organizationId, request.query)
      const tally = <K extends string>(keys: readonly K[], rows: Array<{ key: string; count: number }>) =>
        Object.fromEntries(keys.map((key) => [key, rows.find((row) => row.key === key)?.count ?? 0])) as Record<K, number>
      const byStatus = tally(analysisStatuses, stats.byStatus)
      return {
        byStatus,
        bySeverity: tally(severities, stats.bySeverity),
        total: Object.values(byStatus).reduce((sum, count) => sum + count, 0),
        meanSecondsToCompletion: stats.meanSecondsToCompletion,
        tokens: { prompt: stats.promptTokens, completion: stats.completionTokens, total: stats.promptTokens + stats.completionTokens },
      }
    },
  )

  const insightOf = async (organizationId: string, insightId: string) => {
    const row = isUuid(insightId) ? await findAnalysis(db, organizationId, insightId) : undefined
    if (!row) throw new NotFoundError('insight')
    return row
  }

  app.get(
    '/api/v1/organizations/:orgId/insights/:insightId',
    {
      schema: { tags, summary: 'Get an analysis (insights viewer)', params: InsightParams, response: { 200: Insight } },
      onRequest: viewer,
    },
    async (request) => insightBody(await insightOf(membershipOf(request).organizationId, request.params.insightId)),
  )

  app.get(
    '/api/v1/organizations/:orgId/insights/:insightId/events',
    {
      schema: {
        tags,
        summary: 'The events of an analysis, in order (insights viewer)',
        params: InsightParams,
        response: { 200: Type.Object({ data: Type.Array(InsightEvent) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const analysis = await insightOf(organizationId, request.params.insightId)
      return { data: (await listAnalysisEvents(db, organizationId, analysis.id)).map(insightEventBody) }
    },
  )
}
