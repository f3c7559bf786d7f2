import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ConflictError, NotFoundError, Timestamp, invalidField } from '@svc/http'
import { countEdges, DEPENDENCIES_PER_ORGANIZATION, deleteEdge, insertEdge, listEdges } from './edges.js'
import { insertService, namesTaken, serviceAnsweringTo } from './queries.js'

const OrgParams = Type.Object({ orgId: Type.String() })
const ServiceName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description: 'A service’s key or alias, or a name alerts carry that no service answers to yet (it is registered)',
})
const Dependency = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    service: Type.String({ description: 'The key of the service that depends' }),
    dependsOn: Type.String({ description: 'The key of the service it depends on' }),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'ServiceDependency' },
)
const NewDependency = Type.Object({ service: ServiceName, dependsOn: ServiceName }, { additionalProperties: false })

const dependencyBody = (row: { id: string; service: string; dependsOn: string; createdBy: string | null; createdAt: Date }) => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
})

/** A name as a catalog key: lower-case, runs of other characters a `-`, at most 63 characters. */
function keyOf(name: string): string {
  let slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+/, '')
    .slice(0, 63)
  while (/[-._]$/.test(slug)) slug = slug.slice(0, -1)
  return slug || 'service'
}

/**
 * The service answering to `name`, registered when none does (the map predates the catalog, and
 * its callers name services as their alerts do): keyed by the name as a slug (`-2`, `-3`… when that
 * key is another's), the name itself an alias when the slug differs. Returns whether it was new.
 */
async function serviceNamed(db: Executor, organizationId: string, name: string, userId: string) {
  const found = await serviceAnsweringTo(db, organizationId, name)
  if (found) return { ...found, registered: false }
  const lower = name.toLowerCase()
  const base = keyOf(lower)
  let key = base
  for (let suffix = 2; (await namesTaken(db, organizationId, [key])).size > 0; suffix++) key = `${base.slice(0, 60)}-${suffix}`
  const row = await insertService(
    db,
    organizationId,
    {
      key,
      name,
      description: null,
      ownerTeamId: null,
      escalationPolicyId: null,
      tier: null,
      tags: [],
      links: {},
      aliases: lower === key ? [] : [lower],
    },
    userId,
  )
  return { id: row.id, key: row.key, registered: true }
}

/**
 * The dependency map as edges (decision 0019, "Correlation"), kept for the clients that wrote it
 * before the catalog: each edge joins two catalog services, which a service's own `dependsOn`
 * edits as well. Reading needs alerting viewer, changing alerting manager; every change is audited.
 */
export const dependencyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const entry = (organizationId: string, entityType: string, entityId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType,
    entityId,
  })

  app.get(
    '/api/v1/organizations/:orgId/service-dependencies',
    {
      schema: {
        tags: ['services'],
        summary: 'The service dependency map: which service depends on which, by key (alerting viewer)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Dependency) }) },
      },
      onRequest: viewer,
    },
    async (request) => ({ data: (await listEdges(db, membershipOf(request).organizationId)).map(dependencyBody) }),
  )

  app.post(
    '/api/v1/organizations/:orgId/service-dependencies',
    {
      schema: {
        tags: ['services'],
        summary: 'Record that a service depends on another (alerting manager)',
        description: `Each name finds the service answering to it (key or alias, any case); a name none answers to registers a service (audited). A service cannot depend on itself (400); the same edge twice is 409; at most ${DEPENDENCIES_PER_ORGANIZATION} edges per organization.`,
        params: OrgParams,
        body: NewDependency,
        response: { 201: Dependency },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { userId } = request.user
      const created = await db.transaction().execute(async (trx) => {
        if ((await countEdges(trx, organizationId)) >= DEPENDENCIES_PER_ORGANIZATION) {
          throw new ConflictError(`the organization has ${DEPENDENCIES_PER_ORGANIZATION} dependencies, the most it may keep`)
        }
        const service = await serviceNamed(trx, organizationId, request.body.service.trim(), userId)
        const dependsOn = await serviceNamed(trx, organizationId, request.body.dependsOn.trim(), userId)
        if (service.id === dependsOn.id) throw invalidField('dependsOn', `is the service itself (${service.key})`)
        for (const registered of [service, dependsOn].filter((named) => named.registered))
          await recordAudit(trx, auditContextOf(request), {
            ...entry(organizationId, 'service', registered.id),
            action: 'service.created',
            after: { key: registered.key },
          })
        const row = await insertEdge(trx, organizationId, service.id, dependsOn.id, userId)
        if (!row) throw new ConflictError(`${service.key} already depends on ${dependsOn.key}`)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, 'service_dependency', row.id),
          action: 'service_dependency.created',
          after: { service: service.key, dependsOn: dependsOn.key },
        })
        return { ...row, service: service.key, dependsOn: dependsOn.key }
      })
      return reply.code(201).send(dependencyBody(created))
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/service-dependencies/:dependencyId',
    {
      schema: {
        tags: ['services'],
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
        const removed = isUuid(dependencyId) ? await deleteEdge(trx, organizationId, dependencyId) : undefined
        if (!removed) throw new NotFoundError('service dependency')
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, 'service_dependency', dependencyId),
          action: 'service_dependency.deleted',
          before: removed,
        })
      })
      return reply.code(204).send(null)
    },
  )
}
