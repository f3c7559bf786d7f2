import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { invalidField } from '@svc/http'
import { putRuleSet, ruleSetOf } from './queries.js'
import { PutRuleSet, RuleSet } from './rules.js'

const OrgParams = Type.Object({ orgId: Type.String() })

/**
 * What correlation follows (decision 0019, "Correlation"): the organization's rules, replaced
 * whole; the dependency map it follows is the service catalog's (oncall/services). Reading needs
 * alerting viewer, changing alerting manager; every change is audited.
 */
export const correlationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const audit = (request: Parameters<typeof auditContextOf>[0], organizationId: string, entityType: string, entityId: string | null) => ({
    context: auditContextOf(request),
    entry: { organizationId, product: 'alerting' as const, entityType, entityId },
  })

  const ruleSetBody = (set: Awaited<ReturnType<typeof ruleSetOf>>) => ({ ...set, updatedAt: set.updatedAt?.toISOString() ?? null })

  app.get(
    '/api/v1/organizations/:orgId/incident-rules',
    {
      schema: {
        tags: ['incidents'],
        summary: 'The correlation rules that put new alerts in open incidents (alerting viewer)',
        params: OrgParams,
        response: { 200: RuleSet },
      },
      onRequest: viewer,
    },
    async (request) => ruleSetBody(await ruleSetOf(db, membershipOf(request).organizationId)),
  )

  app.put(
    '/api/v1/organizations/:orgId/incident-rules',
    {
      schema: {
        tags: ['incidents'],
        summary: 'Replace the correlation rules (alerting manager)',
        description:
          'Kinds: fingerprint, labels, service, deploy, dependency; each at most once but labels. An empty list turns correlation off.',
        params: OrgParams,
        body: PutRuleSet,
        response: { 200: RuleSet },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { rules } = request.body
      const seen = new Set<string>()
      rules.forEach((rule, index) => {
        if (rule.kind !== 'labels' && seen.has(rule.kind)) throw invalidField(`rules/${index}/kind`, `${rule.kind} is listed twice`)
        seen.add(rule.kind)
      })
      return db.transaction().execute(async (trx) => {
        const before = await ruleSetOf(trx, organizationId)
        await putRuleSet(trx, organizationId, rules, request.user.userId)
        const { context, entry } = audit(request, organizationId, 'incident_rules', organizationId)
        await recordAudit(trx, context, { ...entry, action: 'incident_rules.updated', before: { rules: before.rules }, after: { rules } })
        return ruleSetBody(await ruleSetOf(trx, organizationId))
      })
    },
  )
}
