import type { AiConfig } from '@svc/config'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { type Executor, pageOf } from '@svc/db'
import { PaginationQuery, type Pagination } from '@svc/http'
import { findBudget, periodOf, saveBudget, usageEventsIn, usageIn } from '../queries/usage.js'
import { OrgParams } from '../analyses/schemas.js'
import { effectiveLimits, limitReached, noteThresholds, percentages, type Limits } from './budget.js'
import { Usage, UsagePatch } from './schemas.js'

const tags = ['usage']

function limitsOf(budget: Limits | undefined) {
  return {
    monthlyAnalyses: budget?.monthlyAnalysisLimit ?? null,
    monthlyTokens: budget?.monthlyTokenLimit ?? null,
    monthlyCostUsd:
      budget?.monthlyCostLimitUsd === null || budget?.monthlyCostLimitUsd === undefined ? null : Number(budget.monthlyCostLimitUsd),
  }
}

async function usageReport(db: Executor, ai: AiConfig, organizationId: string, { page, limit }: Pagination = { page: 1, limit: 20 }) {
  const period = periodOf(new Date())
  const [budget, usage, events] = await Promise.all([
    findBudget(db, organizationId),
    usageIn(db, organizationId, period),
    usageEventsIn(db, organizationId, period, pageOf({ page, limit })),
  ])
  const effective = effectiveLimits(budget, ai)
  const used = Object.values(percentages(effective, usage))
  return {
    period: { start: period.start.toISOString(), end: period.end.toISOString() },
    usage: {
      analyses: usage.analyses,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      tokens: usage.promptTokens + usage.completionTokens,
      estimatedCostUsd: Math.round(usage.costUsd * 1_000_000) / 1_000_000,
    },
    limits: limitsOf(budget),
    effectiveLimits: limitsOf(effective),
    reserved: { tokens: usage.reservedTokens, estimatedCostUsd: Math.round(usage.reservedCostUsd * 1_000_000) / 1_000_000 },
    alertThresholds: effective.alertThresholds,
    percentUsed: used.length === 0 ? null : Math.round(Math.max(...used) * 100) / 100,
    limitReached: limitReached(effective, usage) ?? null,
    eventsMeta: { page, limit, total: events.total },
    events: events.rows.map((event) => ({
      type: event.type as 'threshold_crossed' | 'analysis_skipped',
      threshold: event.threshold,
      data: event.data as Record<string, unknown>,
      createdAt: event.createdAt.toISOString(),
    })),
  }
}

/**
 * AI usage budgets: this month's usage against the organization's limits. Any member may read
 * them; setting limits and thresholds is for the organization's admins and owner.
 */
export const usageRoutes: FastifyPluginAsyncTypebox<{ ai: AiConfig }> = async (app, { ai }) => {
  const db = app.database.db

  app.get(
    '/api/v1/organizations/:orgId/usage',
    {
      schema: {
        tags,
        summary: 'This month’s AI usage, limits and threshold events, the events paged (organization member)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: Usage },
      },
      onRequest: app.requireOrgMember,
    },
    async (request) => usageReport(db, ai, membershipOf(request).organizationId, request.query),
  )

  app.patch(
    '/api/v1/organizations/:orgId/usage',
    {
      schema: {
        tags,
        summary: 'Set usage limits and alert thresholds (organization admin or owner)',
        description: 'Limits given as null are removed. Thresholds already crossed under the new limits are recorded at once.',
        params: OrgParams,
        body: UsagePatch,
        response: { 200: Usage },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { limits = {}, alertThresholds } = request.body
      await db.transaction().execute(async (trx) => {
        const before = await findBudget(trx, organizationId)
        const saved = await saveBudget(
          trx,
          organizationId,
          {
            ...('monthlyAnalyses' in limits ? { monthlyAnalysisLimit: limits.monthlyAnalyses } : {}),
            ...('monthlyTokens' in limits ? { monthlyTokenLimit: limits.monthlyTokens } : {}),
            ...('monthlyCostUsd' in limits ? { monthlyCostLimitUsd: limits.monthlyCostUsd } : {}),
            ...(alertThresholds ? { alertThresholds: [...alertThresholds].sort((a, b) => a - b) } : {}),
          },
          request.user.userId,
        )
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'insights',
          entityType: 'tenant_budget',
          entityId: organizationId,
          action: 'tenant_budget.updated',
          before: before ? { limits: limitsOf(before), alertThresholds: before.alertThresholds } : null,
          after: { limits: limitsOf(saved), alertThresholds: saved.alertThresholds },
        })
        await noteThresholds(trx, organizationId, effectiveLimits(saved, ai))
      })
      return usageReport(db, ai, organizationId)
    },
  )
}
