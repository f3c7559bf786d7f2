import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ListResponse, NotFoundError } from '@svc/http'
import { recentServiceNames } from '../../alerts/index.js'
import { dependsOnOf } from './edges.js'
import {
  catalogNames,
  deleteService,
  findService,
  insertService,
  listServices,
  updateService,
  type ServiceFields,
  type ServiceRow,
} from './queries.js'
import { CreateService, Service, ServiceParams, ServiceQuery, ServiceWithShowings, UnregisteredService, UpdateService } from './schemas.js'
import { audited, checkService, dependOn, fieldsOf, lowerCased } from './writes.js'

/** What shows a service elsewhere, read by the surfaces that own it (wired in by the product service). */
export interface ServiceShowings {
  components(
    db: Executor,
    organizationId: string,
    names: string[],
  ): Promise<Array<{ id: string; name: string; pageId: string; pageSlug: string }>>
  checks(db: Executor, organizationId: string, names: string[]): Promise<Array<{ id: string; name: string }>>
}

export interface ServiceRouteOptions {
  serviceShowings: ServiceShowings
}

const tags = ['services']
const OrgParams = Type.Object({ orgId: Type.String() })
/** How far back `…/services/unregistered` looks at alerts. */
const UNREGISTERED_DAYS = 30

function serviceBody(row: ServiceRow, dependsOn: string[]) {
  return {
    id: row.id,
    ...fieldsOf(row),
    dependsOn,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** A service's page of rows with what each depends on. */
async function serviceBodies(db: Executor, organizationId: string, rows: ServiceRow[]) {
  const dependsOn = await dependsOnOf(
    db,
    organizationId,
    rows.map((row) => row.id),
  )
  return rows.map((row) => serviceBody(row, dependsOn.get(row.id) ?? []))
}

/**
 * The service catalog (issue 55; docs/alerting.md, "Services"): a service is the key an
 * organization's alerts name it by, with the team that owns it, the policy its alerts page when
 * their config names none, its tier, tags, links and aliases. Reading needs alerting viewer,
 * changing alerting manager; every change is audited.
 */
export const serviceRoutes: FastifyPluginAsyncTypebox<ServiceRouteOptions> = async (app, { serviceShowings }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const serviceOf = async (executor: Executor, organizationId: string, serviceId: string, forUpdate = false) => {
    const row = isUuid(serviceId) ? await findService(executor, organizationId, serviceId, forUpdate) : undefined
    if (!row) throw new NotFoundError('service')
    return row
  }
  const entry = (organizationId: string, serviceId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'service',
    entityId: serviceId,
  })

  app.get(
    '/api/v1/organizations/:orgId/services',
    {
      schema: {
        tags,
        summary: 'List services, by key (alerting viewer)',
        params: OrgParams,
        querystring: ServiceQuery,
        response: { 200: ListResponse(Service) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, q, tag } = request.query
      const { rows, total } = await listServices(db, membershipOf(request).organizationId, { q, tag }, pageOf({ page, limit }))

      const organizationId = membershipOf(request).organizationId
      return { data: await serviceBodies(db, organizationId, rows), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/services/unregistered',
    {
      schema: {
        tags,
        summary: 'Service names alerts carried in the last 30 days that no service answers to (alerting viewer)',
        description:
          'Busiest first, at most 100. Each is one call from the catalog: `POST …/services {"key": name}`, or the name added to an existing service’s `aliases`.',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(UnregisteredService) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const [seen, known] = await Promise.all([recentServiceNames(db, organizationId, UNREGISTERED_DAYS), catalogNames(db, organizationId)])
      const unknown = seen.filter((row) => !known.has(row.service.toLowerCase())).slice(0, 100)
      return { data: unknown.map((row) => ({ name: row.service, alerts: row.alerts, lastSeenAt: row.lastSeenAt.toISOString() })) }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/services/:serviceId',
    {
      schema: {
        tags,
        summary: 'A service, with the status page components and checks that show it (alerting viewer)',
        params: ServiceParams,
        response: { 200: ServiceWithShowings },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const row = await serviceOf(db, organizationId, request.params.serviceId)
      const names = [row.key, ...row.aliases]
      const [[body], statusComponents, checks] = await Promise.all([
        serviceBodies(db, organizationId, [row]),
        serviceShowings.components(db, organizationId, names),
        serviceShowings.checks(db, organizationId, names),
      ])
      return { ...body!, statusComponents, checks }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/services',
    {
      schema: {
        tags,
        summary: 'Register a service (alerting manager)',
        description:
          'The key and aliases are kept lower-case and name one service of the organization (409 naming the service that has one). Alerts whose `service` is its key or an alias are its alerts.',
        params: OrgParams,
        body: CreateService,
        response: { 201: Service },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { body } = request
      const { dependsOn = [] } = body
      const key = body.key.toLowerCase()
      const fields: ServiceFields = {
        key,
        name: body.name?.trim() ?? key,
        description: body.description ?? null,
        ownerTeamId: body.ownerTeamId ?? null,
        escalationPolicyId: body.escalationPolicyId ?? null,
        tier: body.tier ?? null,
        tags: body.tags ?? [],
        links: body.links ?? {},
        aliases: lowerCased(body.aliases ?? []),
      }
      const created = await db.transaction().execute(async (trx) => {
        await checkService(trx, organizationId, fields)
        const row = await insertService(trx, organizationId, fields, request.user.userId)
        const keys = await dependOn(trx, organizationId, row, dependsOn, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, row.id),
          action: 'service.created',
          after: audited(fields, keys),
        })
        return serviceBody(row, keys)
      })
      return reply.code(201).send(created)
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/services/:serviceId',
    {
      schema: {
        tags,
        summary: 'Change a service (alerting manager)',
        params: ServiceParams,
        body: UpdateService,
        response: { 200: Service },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { dependsOn, ...body } = request.body
      const changes: Partial<ServiceFields> = {
        ...body,
        ...(body.key === undefined ? {} : { key: body.key.toLowerCase() }),
        ...(body.name === undefined ? {} : { name: body.name.trim() }),
        ...(body.aliases === undefined ? {} : { aliases: lowerCased(body.aliases) }),
      }
      const updated = await db.transaction().execute(async (trx) => {
        const before = await serviceOf(trx, organizationId, request.params.serviceId, true)
        const current = fieldsOf(before)
        const next: ServiceFields = { ...current, ...changes }
        await checkService(trx, organizationId, next, before.id)
        const row = await updateService(trx, organizationId, before.id, changes)
        const dependedOn = (await dependsOnOf(trx, organizationId, [before.id])).get(before.id) ?? []
        const keys = dependsOn === undefined ? dependedOn : await dependOn(trx, organizationId, row, dependsOn, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'service.updated',
          before: audited(current, dependedOn),
          after: audited(next, keys),
        })
        return serviceBody(row, keys)
      })
      return updated
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/services/:serviceId',
    {
      schema: {
        tags,
        summary: 'Remove a service from the catalog (alerting manager); its alerts keep their `service` name',
        params: ServiceParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await serviceOf(trx, organizationId, request.params.serviceId, true)
        const dependedOn = (await dependsOnOf(trx, organizationId, [before.id])).get(before.id) ?? []
        await deleteService(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'service.deleted',
          before: audited(fieldsOf(before), dependedOn),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
