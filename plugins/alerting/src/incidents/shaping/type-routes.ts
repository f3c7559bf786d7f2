import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import {
  deleteType,
  fieldsByKey,
  findType,
  findTypeByKey,
  insertType,
  listTypes,
  storedTypeFields,
  storedTypeRoles,
  updateType,
  type TypeRow,
} from './queries.js'
import { CreateIncidentType, IncidentType, TypeParams, UpdateIncidentType, type TypeField, type TypeRole } from './schemas.js'

const tags = ['incidents']
const OrgParams = Type.Object({ orgId: Type.String() })
const base = '/api/v1/organizations/:orgId/incident-types'

export const typeBody = (row: TypeRow) => ({
  ...row,
  fields: storedTypeFields(row.fields),
  roles: storedTypeRoles(row.roles),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

const audited = (row: { key: string; name: string; fields: TypeField[]; roles: TypeRole[] }) => ({
  key: row.key,
  name: row.name,
  fields: row.fields,
  roles: row.roles,
})

/** Each role once; commander is every incident's, so it may carry tasks but is never left out (400 naming the entry). */
function checkTypeRoles(roles: TypeRole[]) {
  const seen = new Set<string>()
  roles.forEach((entry, index) => {
    if (seen.has(entry.role)) throw invalidField(`roles/${index}/role`, `names ${entry.role} a second time`)
    seen.add(entry.role)
  })
}

/** Each entry names a custom field of the organization, once (400 naming the entry). */
async function checkTypeFields(db: Executor, organizationId: string, fields: TypeField[]) {
  const known = await fieldsByKey(db, organizationId)
  const seen = new Set<string>()
  fields.forEach((entry, index) => {
    if (!known.has(entry.field)) throw invalidField(`fields/${index}/field`, `is not a custom field of the organization (${entry.field})`)
    if (seen.has(entry.field)) throw invalidField(`fields/${index}/field`, `names ${entry.field} a second time`)
    seen.add(entry.field)
  })
}

/**
 * The organization's incident types (decision 0031): a type says which custom fields its
 * incidents need and when, and workflows may act on incidents of some types only. Incidents with
 * no type are as before. Reading needs alerting viewer, changing alerting manager; audited.
 */
export const incidentTypeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const typeOf = async (executor: Executor, organizationId: string, typeId: string, forUpdate = false) => {
    const row = isUuid(typeId) ? await findType(executor, organizationId, typeId, forUpdate) : undefined
    if (!row) throw new NotFoundError('incident type')
    return row
  }
  const entry = (organizationId: string, typeId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'incident_type',
    entityId: typeId,
  })

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List incident types, by key (alerting viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(IncidentType) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listTypes(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(typeBody), meta: { page, limit, total } }
    },
  )

  app.get(
    `${base}/:typeId`,
    {
      schema: { tags, summary: 'An incident type (alerting viewer)', params: TypeParams, response: { 200: IncidentType } },
      onRequest: viewer,
    },
    async (request) => typeBody(await typeOf(db, membershipOf(request).organizationId, request.params.typeId)),
  )

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Add an incident type (alerting manager)',
        description: 'Incidents are declared with it as `type: <key>`. 409 when the key is taken.',
        params: OrgParams,
        body: CreateIncidentType,
        response: { 201: IncidentType },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { key, name, description = null, fields = [], roles = [] } = request.body
      if (key === 'none') throw invalidField('key', 'none is how the incident list asks for incidents of no type')
      checkTypeRoles(roles)
      const created = await db.transaction().execute(async (trx) => {
        if (await findTypeByKey(trx, organizationId, key)) throw new ConflictError(`key: ${key} already names an incident type`)
        await checkTypeFields(trx, organizationId, fields)
        const row = await insertType(trx, organizationId, { key, name: name.trim(), description, fields, roles }, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, row.id),
          action: 'incident_type.created',
          after: audited({ key, name, fields, roles }),
        })
        return row
      })
      return reply.code(201).send(typeBody(created))
    },
  )

  app.patch(
    `${base}/:typeId`,
    {
      schema: {
        tags,
        summary: 'Change an incident type’s name, description, fields or roles (alerting manager)',
        description:
          'Its key stays. The fields apply to its incidents from their next change on; the roles and their checklists at once (a role held on an incident stays held).',
        params: TypeParams,
        body: UpdateIncidentType,
        response: { 200: IncidentType },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { name, fields, description, roles } = request.body
      if (roles) checkTypeRoles(roles)
      const updated = await db.transaction().execute(async (trx) => {
        const before = await typeOf(trx, organizationId, request.params.typeId, true)
        if (fields) await checkTypeFields(trx, organizationId, fields)
        const row = await updateType(trx, organizationId, before.id, {
          ...(name === undefined ? {} : { name: name.trim() }),
          ...(description === undefined ? {} : { description }),
          ...(fields === undefined ? {} : { fields }),
          ...(roles === undefined ? {} : { roles }),
        })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'incident_type.updated',
          before: audited(typeBody(before)),
          after: audited(typeBody(row)),
        })
        return row
      })
      return typeBody(updated)
    },
  )

  app.delete(
    `${base}/:typeId`,
    {
      schema: {
        tags,
        summary: 'Remove an incident type (alerting manager); its incidents keep their field values and have no type',
        params: TypeParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await typeOf(trx, organizationId, request.params.typeId, true)
        await deleteType(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'incident_type.deleted',
          before: audited(typeBody(before)),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
