import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import { deleteField, fieldKeyTaken, findField, insertField, listFields, updateField, type FieldDefinition } from './queries.js'
import { CreateIncidentField, FieldParams, IncidentField, UpdateIncidentField, type FieldKind } from './schemas.js'

const tags = ['incidents']
const OrgParams = Type.Object({ orgId: Type.String() })
const base = '/api/v1/organizations/:orgId/incident-fields'

export const fieldBody = (row: FieldDefinition) => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

const audited = (row: Omit<FieldDefinition, 'id' | 'createdAt' | 'updatedAt'>) => ({
  key: row.key,
  name: row.name,
  kind: row.kind,
  options: row.options,
  required: row.required,
})

/** Select kinds take their options, the others none (400 naming `options`). */
function checkOptions(kind: FieldKind, options: string[] | undefined) {
  const selects = kind === 'select' || kind === 'multi_select'
  if (selects && !options) throw invalidField('options', `is required for a ${kind} field`)
  if (!selects && options) throw invalidField('options', `is for select and multi_select fields, not ${kind}`)
}

/**
 * The organization's custom incident fields (decision 0031). Reading needs alerting viewer,
 * changing alerting manager; every change is audited. Deleting a field removes its values from
 * every incident and its place in every type.
 */
export const incidentFieldRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const fieldOf = async (executor: Executor, organizationId: string, fieldId: string, forUpdate = false) => {
    const row = isUuid(fieldId) ? await findField(executor, organizationId, fieldId, forUpdate) : undefined
    if (!row) throw new NotFoundError('incident field')
    return row
  }
  const entry = (organizationId: string, fieldId: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'incident_field',
    entityId: fieldId,
  })

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List custom incident fields, by key (alerting viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(IncidentField) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listFields(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(fieldBody), meta: { page, limit, total } }
    },
  )

  app.get(
    `${base}/:fieldId`,
    {
      schema: { tags, summary: 'A custom incident field (alerting viewer)', params: FieldParams, response: { 200: IncidentField } },
      onRequest: viewer,
    },
    async (request) => fieldBody(await fieldOf(db, membershipOf(request).organizationId, request.params.fieldId)),
  )

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Add a custom incident field (alerting manager)',
        description:
          'Incidents carry its value under `fields.<key>`; `required` says when every incident needs it (an incident type may ask more). 409 when the key is taken.',
        params: OrgParams,
        body: CreateIncidentField,
        response: { 201: IncidentField },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { key, name, description = null, kind, options, required = 'never' } = request.body
      checkOptions(kind, options)
      if (key === 'type') throw invalidField('key', 'type is how chat commands name the incident type')
      const created = await db.transaction().execute(async (trx) => {
        if (await fieldKeyTaken(trx, organizationId, key)) throw new ConflictError(`key: ${key} already names a custom field`)
        const fields = { key, name: name.trim(), description, kind, options: options ?? [], required }
        const row = await insertField(trx, organizationId, fields, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, row.id),
          action: 'incident_field.created',
          after: audited(row),
        })
        return row
      })
      return reply.code(201).send(fieldBody(created))
    },
  )

  app.patch(
    `${base}/:fieldId`,
    {
      schema: {
        tags,
        summary: 'Change a custom incident field’s name, description, options or requirement (alerting manager)',
        description: 'Its key and kind stay. Values incidents already carry are kept when an option is removed.',
        params: FieldParams,
        body: UpdateIncidentField,
        response: { 200: IncidentField },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { name, ...change } = request.body
      const updated = await db.transaction().execute(async (trx) => {
        const before = await fieldOf(trx, organizationId, request.params.fieldId, true)
        if (change.options) checkOptions(before.kind, change.options)
        const row = await updateField(trx, organizationId, before.id, { ...change, ...(name === undefined ? {} : { name: name.trim() }) })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'incident_field.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      return fieldBody(updated)
    },
  )

  app.delete(
    `${base}/:fieldId`,
    {
      schema: {
        tags,
        summary: 'Remove a custom incident field, its values on every incident and its place in every type (alerting manager)',
        params: FieldParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await fieldOf(trx, organizationId, request.params.fieldId, true)
        await deleteField(trx, organizationId, before)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'incident_field.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
