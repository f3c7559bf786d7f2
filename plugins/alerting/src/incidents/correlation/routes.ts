import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { ConflictError, NotFoundError, Timestamp, invalidField } from '@svc/http'
import {
  DEPENDENCIES_PER_ORGANIZATION,
  countDependencies,
  deleteDependency,
  insertDependency,
  listDependencies,
  putRuleSet,
  ruleSetOf,
} from './queries.js'
import { PutRuleSet, RuleSet } from './rules.js'

const OrgParams = Type.Object({ orgId: Type.String() })
const Service = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'A service name as alerts carry it' })
const Dependency = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    service: Type.String(),
    dependsOn: Type.String(),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'ServiceDependency' },
)
const NewDependency = Type.Object({ service: Service, dependsOn: Service }, { additionalProperties: false })

const dependencyBody = (row: { id: string; service: string; dependsOn: string; createdBy: string | null; createdAt: Date }) => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
})

/**
 * What correlation follows (decision 0019, "Correlation"): the organization's rules, replaced
 * whole, and its service dependency map. Reading needs alerting viewer, changing alerting
 * manager; every change is audited.
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

  app.get(
    '/api/v1/organizations/:orgId/service-dependencies',
    {
      schema: {
        tags: ['incidents'],
        summary: 'The service dependency map: which service depends on which (alerting viewer)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Dependency) }) },
      },
      onRequest: viewer,
    },
    async (request) => ({ data: (await listDependencies(db, membershipOf(request).organizationId)).map(dependencyBody) }),
  )

  app.post(
    '/api/v1/organizations/:orgId/service-dependencies',
    {
      schema: {
        tags: ['incidents'],
        summary: 'Record that a service depends on another (alerting manager)',
        description: `A service cannot depend on itself (400); the same edge twice is 409; at most ${DEPENDENCIES_PER_ORGANIZATION} edges per organization.`,
        params: OrgParams,
        body: NewDependency,
        response: { 201: Dependency },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const service = request.body.service.trim()
      const dependsOn = request.body.dependsOn.trim()
      if (service === dependsOn) throw invalidField('dependsOn', 'is the service itself')
      const created = await db.transaction().execute(async (trx) => {
        if ((await countDependencies(trx, organizationId)) >= DEPENDENCIES_PER_ORGANIZATION) {
          throw new ConflictError(`the organization has ${DEPENDENCIES_PER_ORGANIZATION} dependencies, the most it may keep`)
        }
        const row = await insertDependency(trx, organizationId, service, dependsOn, request.user.userId)
        if (!row) throw new ConflictError(`${service} already depends on ${dependsOn}`)
        const { context, entry } = audit(request, organizationId, 'service_dependency', row.id)
        await recordAudit(trx, context, { ...entry, action: 'service_dependency.created', after: { service, dependsOn } })
        return row
      })
      return reply.code(201).send(dependencyBody(created))
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/service-dependencies/:dependencyId',
    {
      schema: {
        tags: ['incidents'],
        summary: 'Remove a dependency (alerting manager)',
        params: Type.Object({ orgId: Type.String(), dependencyId: Type.String() }),
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { dependencyId } = request.params
      await db.transaction().execute(async (trx) => {
        const removed = isUuid(dependencyId) ? await deleteDependency(trx, organizationId, dependencyId) : undefined
        if (!removed) throw new NotFoundError('service dependency')
        const { context, entry } = audit(request, organizationId, 'service_dependency', dependencyId)
        await recordAudit(trx, context, { ...entry, action: 'service_dependency.deleted', before: removed })
      })
      return reply.code(204).send(null)
    },
  )
}
