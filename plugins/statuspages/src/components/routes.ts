import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import {
  deleteComponent,
  deleteGroup,
  findComponent,
  findGroup,
  insertComponent,
  insertGroup,
  listComponents,
  listGroups,
  nextPosition,
  setComponentStatuses,
  updateComponent,
  updateGroup,
  type ComponentFields,
  type ComponentRow,
} from '../queries/components.js'
import { touchPage } from '../queries/pages.js'
import { checkAudiences } from '../audiences/tags.js'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import {
  AudienceIdsInput,
  Component,
  ComponentGroup,
  ComponentParams,
  ComponentStatusSchema,
  GroupParams,
  MANAGED_BASE,
  OptionalText,
  PageParams,
  componentBody,
  groupBody,
  sliced,
  tags,
} from '../schemas.js'

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Position = Type.Integer({ minimum: 0, maximum: 10_000, description: 'Display order, lowest first; unset: after the last' })
const AlertServices = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  maxItems: 50,
  uniqueItems: true,
  description: 'Alert services linked to this component (the workflow action update_status_page finds components by them)',
})
const componentFields = {
  name: Name,
  description: OptionalText(1000),
  groupId: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'A group of the same page, or null' })),
  position: Type.Optional(Position),
  status: Type.Optional(ComponentStatusSchema),
  showUptime: Type.Optional(Type.Boolean()),
  alertServices: Type.Optional(AlertServices),
  audienceIds: Type.Optional(AudienceIdsInput),
}
const groupFields = { name: Name, description: OptionalText(1000), position: Type.Optional(Position) }

const audited = (row: ComponentRow) => ({
  name: row.name,
  groupId: row.groupId,
  status: row.status,
  position: row.position,
  audienceIds: row.audienceIds,
})

/**
 * Components and component groups of a page (issue 15). A component's status changes are each
 * recorded with their time (uptime is computed from them). Reading needs statuspages viewer,
 * changing statuspages manager.
 */
export const componentRoutes: FastifyPluginAsyncTypebox<{ changed: (pageId: string) => void }> = async (app, options) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const manager = app.requireProductRole('statuspages', 'manager')
  const componentOf = async (executor: Executor, organizationId: string, pageId: string, id: string) => {
    const row = isUuid(id) ? await findComponent(executor, organizationId, pageId, id) : undefined
    if (!row) throw new NotFoundError('component')
    return row
  }
  const groupOf = async (executor: Executor, organizationId: string, pageId: string, id: string) => {
    const row = isUuid(id) ? await findGroup(executor, organizationId, pageId, id) : undefined
    if (!row) throw new NotFoundError('component group')
    return row
  }
  const checkGroup = async (executor: Executor, organizationId: string, pageId: string, groupId: string | null | undefined) => {
    if (!groupId) return
    if (!isUuid(groupId) || !(await findGroup(executor, organizationId, pageId, groupId)))
      throw invalidField('groupId', 'is not a group of this page')
  }

  app.get(
    `${MANAGED_BASE}/pages/:pageId/components`,
    {
      schema: {
        tags,
        summary: 'A page’s components in display order (statuspages viewer)',
        params: PageParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Component) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return sliced((await listComponents(db, page.organizationId, page.id)).map(componentBody), request.query)
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/components/:componentId`,
    {
      schema: { tags, summary: 'A component (statuspages viewer)', params: ComponentParams, response: { 200: Component } },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return componentBody(await componentOf(db, page.organizationId, page.id, request.params.componentId))
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/components`,
    {
      schema: {
        tags,
        summary: 'Add a component (statuspages manager)',
        params: PageParams,
        body: Type.Object(componentFields, { additionalProperties: false }),
        response: { 201: Component },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const created = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        await checkGroup(trx, organizationId, page.id, request.body.groupId)
        const audienceIds = (await checkAudiences(trx, page, request.body.audienceIds)) ?? []
        const fields: ComponentFields = {
          name: request.body.name.trim(),
          description: request.body.description ?? null,
          groupId: request.body.groupId ?? null,
          position: request.body.position ?? (await nextPosition(trx, 'divinux.statusComponents', page.id)),
          showUptime: request.body.showUptime ?? true,
          alertServices: request.body.alertServices ?? [],
          audienceIds,
        }
        const row = await insertComponent(trx, organizationId, page.id, fields, request.body.status ?? 'operational')
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component', row.id),
          action: 'status_component.created',
          after: audited(row),
        })
        return row
      })
      options.changed(created.pageId)
      return reply.code(201).send(componentBody(created))
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/components/:componentId`,
    {
      schema: {
        tags,
        summary: 'Change a component, its status included (statuspages manager)',
        params: ComponentParams,
        body: Type.Object({ ...componentFields, name: Type.Optional(Name) }, { additionalProperties: false, minProperties: 1 }),
        response: { 200: Component },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await componentOf(trx, organizationId, page.id, request.params.componentId)
        await checkGroup(trx, organizationId, page.id, request.body.groupId)
        const { status, ...fields } = request.body
        if (fields.name !== undefined) fields.name = fields.name.trim()
        fields.audienceIds = await checkAudiences(trx, page, fields.audienceIds)
        if (status) await setComponentStatuses(trx, page.id, new Map([[before.id, { status, declaredStatus: status }]]))
        const row = await updateComponent(trx, before.id, fields)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component', row.id),
          action: 'status_component.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      options.changed(updated.pageId)
      return componentBody(updated)
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/components/:componentId`,
    {
      schema: { tags, summary: 'Remove a component (statuspages manager)', params: ComponentParams, response: { 204: Type.Null() } },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await componentOf(trx, organizationId, page.id, request.params.componentId)
        await deleteComponent(trx, row.id)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component', row.id),
          action: 'status_component.deleted',
          before: audited(row),
        })
        return page.id
      })
      options.changed(pageId)
      return reply.code(204).send(null)
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/component-groups`,
    {
      schema: {
        tags,
        summary: 'A page’s component groups (statuspages viewer)',
        params: PageParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(ComponentGroup) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return sliced((await listGroups(db, page.organizationId, page.id)).map(groupBody), request.query)
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/component-groups`,
    {
      schema: {
        tags,
        summary: 'Add a component group (statuspages manager)',
        params: PageParams,
        body: Type.Object(groupFields, { additionalProperties: false }),
        response: { 201: ComponentGroup },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const created = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await insertGroup(trx, organizationId, page.id, {
          name: request.body.name.trim(),
          description: request.body.description ?? null,
          position: request.body.position ?? (await nextPosition(trx, 'divinux.statusComponentGroups', page.id)),
        })
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component_group', row.id),
          action: 'status_component_group.created',
          after: { name: row.name },
        })
        return row
      })
      options.changed(created.pageId)
      return reply.code(201).send(groupBody(created))
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/component-groups/:groupId`,
    {
      schema: {
        tags,
        summary: 'Change a component group (statuspages manager)',
        params: GroupParams,
        body: Type.Object({ ...groupFields, name: Type.Optional(Name) }, { additionalProperties: false, minProperties: 1 }),
        response: { 200: ComponentGroup },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await groupOf(trx, organizationId, page.id, request.params.groupId)
        const fields = { ...request.body, ...(request.body.name !== undefined ? { name: request.body.name.trim() } : {}) }
        const row = await updateGroup(trx, before.id, fields)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component_group', row.id),
          action: 'status_component_group.updated',
          before: { name: before.name },
          after: { name: row.name },
        })
        return row
      })
      options.changed(updated.pageId)
      return groupBody(updated)
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/component-groups/:groupId`,
    {
      schema: {
        tags,
        summary: 'Remove a component group; its components stay, ungrouped (statuspages manager)',
        params: GroupParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await groupOf(trx, organizationId, page.id, request.params.groupId)
        await deleteGroup(trx, row.id)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_component_group', row.id),
          action: 'status_component_group.deleted',
          before: { name: row.name },
        })
        return page.id
      })
      options.changed(pageId)
      return reply.code(204).send(null)
    },
  )
}
