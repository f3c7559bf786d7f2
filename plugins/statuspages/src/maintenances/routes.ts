import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery, Timestamp, invalidField } from '@svc/http'
import { maintenanceMayMove, type ComponentStatus, type MaintenanceStatus } from '../model.js'
import {
  findIncident,
  incidentComponents,
  listIncidents,
  putIncidentComponents,
  removeIncidentComponents,
  updateIncident,
  type IncidentRow,
} from '../queries/incidents.js'
import { touchPage } from '../queries/pages.js'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import {
  AudienceIdsInput,
  IncidentUpdate,
  MANAGED_BASE,
  Maintenance,
  MaintenanceParams,
  MaintenanceStatusSchema,
  PageParams,
  maintenanceBody,
  tags,
  updateBody,
} from '../schemas.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { settleComponents } from '../incidents/effects.js'
import { checkAudiences } from '../audiences/tags.js'
import { checkComponents, openRecord, recordDetails, recordUpdate, removeRecord, setPublished } from '../incidents/records.js'
import { quietMonitoring, type MonitoringQuieter } from './quiet.js'
import type { MaintenanceScheduler } from './scheduler.js'

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })
const Body = Type.String({ minLength: 1, maxLength: 10_000, pattern: '\\S' })
const ComponentIds = Type.Array(Type.String(), {
  maxItems: 100,
  uniqueItems: true,
  description: 'Components under maintenance while it is in progress',
})

const audited = (row: IncidentRow) => ({
  name: row.name,
  status: row.status,
  audienceIds: row.audienceIds,
  scheduledFor: row.scheduledFor?.toISOString(),
  scheduledUntil: row.scheduledUntil?.toISOString(),
})

function checkWindow(scheduledFor: Date, scheduledUntil: Date): void {
  if (scheduledUntil.getTime() <= scheduledFor.getTime()) throw invalidField('scheduledUntil', 'must be after scheduledFor')
}

const underMaintenance = (ids: string[]) => ids.map((componentId) => ({ componentId, status: 'under_maintenance' as ComponentStatus }))

/**
 * Scheduled maintenance of a page (issue 15): `scheduled → in_progress → verifying → completed`,
 * or `cancelled`; never back. While in progress or verifying its components are
 * `under_maintenance`. It starts and completes at its times on its own (pg-boss jobs) unless
 * `autoStart`/`autoComplete` are off. Reading needs statuspages viewer, scheduling manager,
 * posting updates responder.
 */
export const maintenanceRoutes: FastifyPluginAsyncTypebox<{
  notifications: SubscriberNotifications
  scheduler: MaintenanceScheduler
  changed: (pageId: string) => void
  /** Unset: a maintenance quiets no alerts (the status pages alone). */
  quieter?: MonitoringQuieter
}> = async (app, { notifications, scheduler, changed, quieter }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const responder = app.requireProductRole('statuspages', 'responder')
  const manager = app.requireProductRole('statuspages', 'manager')
  const maintenanceOf = async (executor: Executor, organizationId: string, pageId: string, id: string, forUpdate = false) => {
    const row = isUuid(id) ? await findIncident(executor, organizationId, pageId, 'maintenance', id, forUpdate) : undefined
    if (!row) throw new NotFoundError('maintenance')
    return row
  }
  const answer = async (executor: Executor, row: IncidentRow) => {
    const details = (await recordDetails(executor, [row]))(row)
    return maintenanceBody(row, details.components, details.updates)
  }

  app.get(
    `${MANAGED_BASE}/pages/:pageId/maintenances`,
    {
      schema: {
        tags,
        summary: 'A page’s maintenances, newest first (statuspages viewer)',
        params: PageParams,
        querystring: Type.Object({ ...PaginationQuery.properties, status: Type.Optional(MaintenanceStatusSchema) }),
        response: { 200: ListResponse(Maintenance) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      const { page: number, limit, status } = request.query
      const { rows, total } = await listIncidents(
        db,
        page.organizationId,
        page.id,
        'maintenance',
        { status },
        pageOf({ page: number, limit }),
      )
      const details = await recordDetails(db, rows)
      return {
        data: rows.map((row) => {
          const { components, updates } = details(row)
          return maintenanceBody(row, components, updates)
        }),
        meta: { page: number, limit, total },
      }
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/maintenances/:maintenanceId`,
    {
      schema: {
        tags,
        summary: 'A maintenance with its updates (statuspages viewer)',
        params: MaintenanceParams,
        response: { 200: Maintenance },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return answer(db, await maintenanceOf(db, page.organizationId, page.id, request.params.maintenanceId))
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/maintenances`,
    {
      schema: {
        tags,
        summary: 'Schedule a maintenance (statuspages manager)',
        params: PageParams,
        body: Type.Object(
          {
            name: Name,
            body: Type.Optional(Body),
            scheduledFor: Timestamp,
            scheduledUntil: Timestamp,
            componentIds: Type.Optional(ComponentIds),
            autoStart: Type.Optional(Type.Boolean({ default: true })),
            autoComplete: Type.Optional(Type.Boolean({ default: true })),
            published: Type.Optional(Type.Boolean({ default: true })),
            audienceIds: Type.Optional(AudienceIdsInput),
            notify: Type.Optional(Type.Boolean({ default: true })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Maintenance },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { name, componentIds = [], autoStart = true, autoComplete = true, published = true, notify = true } = request.body
      const scheduledFor = new Date(request.body.scheduledFor)
      const scheduledUntil = new Date(request.body.scheduledUntil)
      checkWindow(scheduledFor, scheduledUntil)
      const created = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const statuses = await checkComponents(trx, page, underMaintenance(componentIds), 'componentIds')
        const audienceIds = (await checkAudiences(trx, page, request.body.audienceIds)) ?? []
        const { row } = await openRecord(
          trx,
          notifications,
          {
            organizationId,
            pageId: page.id,
            kind: 'maintenance',
            name: name.trim(),
            status: 'scheduled',
            impact: 'maintenance',
            published,
            audienceIds,
            scheduledFor,
            scheduledUntil,
            autoStart,
            autoComplete,
            startedAt: scheduledFor,
            createdBy: request.user.userId,
          },
          {
            status: 'scheduled',
            body: request.body.body ?? `${name.trim()} is scheduled.`,
            statuses,
            createdBy: request.user.userId,
            notify,
          },
        )
        await scheduler.schedule(trx, row)
        await quietMonitoring(trx, quieter, row)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_maintenance', row.id),
          action: 'status_maintenance.created',
          after: audited(row),
        })
        return answer(trx, row)
      })
      changed(created.pageId)
      return reply.code(201).send(created)
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/maintenances/:maintenanceId`,
    {
      schema: {
        tags,
        summary: 'Move, rename or publish a maintenance that has not ended (statuspages manager)',
        params: MaintenanceParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            scheduledFor: Type.Optional(Timestamp),
            scheduledUntil: Type.Optional(Timestamp),
            componentIds: Type.Optional(ComponentIds),
            autoStart: Type.Optional(Type.Boolean()),
            autoComplete: Type.Optional(Type.Boolean()),
            published: Type.Optional(Type.Boolean()),
            audienceIds: Type.Optional(AudienceIdsInput),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Maintenance },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await maintenanceOf(trx, organizationId, page.id, request.params.maintenanceId, true)
        if (before.status === 'completed' || before.status === 'cancelled')
          throw invalidField('status', `a ${before.status} maintenance cannot change`)
        const { published, componentIds, ...fields } = request.body
        const scheduledFor = fields.scheduledFor ? new Date(fields.scheduledFor) : before.scheduledFor!
        const scheduledUntil = fields.scheduledUntil ? new Date(fields.scheduledUntil) : before.scheduledUntil!
        checkWindow(scheduledFor, scheduledUntil)
        const previous = (await incidentComponents(trx, [before.id])).map((component) => component.componentId)
        if (componentIds) {
          const statuses = await checkComponents(trx, page, underMaintenance(componentIds), 'componentIds')
          await removeIncidentComponents(trx, before.id)
          await putIncidentComponents(trx, before.id, statuses)
        }
        const audienceIds = await checkAudiences(trx, page, fields.audienceIds)
        let row = await updateIncident(trx, before.id, {
          ...(fields.name ? { name: fields.name.trim() } : {}),
          ...(audienceIds ? { audienceIds } : {}),
          ...(fields.autoStart !== undefined ? { autoStart: fields.autoStart } : {}),
          ...(fields.autoComplete !== undefined ? { autoComplete: fields.autoComplete } : {}),
          scheduledFor,
          scheduledUntil,
          ...(before.status === 'scheduled' ? { startedAt: scheduledFor } : {}),
        })
        if (published !== undefined) row = await setPublished(trx, notifications, { ...row, published: before.published }, published)
        if (componentIds) {
          await settleComponents(trx, page.id, [...new Set([...previous, ...componentIds])])
        }
        const moved =
          scheduledFor.getTime() !== before.scheduledFor?.getTime() || scheduledUntil.getTime() !== before.scheduledUntil?.getTime()
        if (moved) await scheduler.schedule(trx, row)
        await quietMonitoring(trx, quieter, row)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_maintenance', row.id),
          action: 'status_maintenance.updated',
          before: audited(before),
          after: audited(row),
        })
        return answer(trx, row)
      })
      changed(updated.pageId)
      return updated
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/maintenances/:maintenanceId`,
    {
      schema: {
        tags,
        summary: 'Delete a maintenance; its components return (statuspages manager)',
        params: MaintenanceParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await maintenanceOf(trx, organizationId, page.id, request.params.maintenanceId, true)
        await quietMonitoring(trx, quieter, row, true)
        await removeRecord(trx, row)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_maintenance', row.id),
          action: 'status_maintenance.deleted',
          before: audited(row),
        })
        return page.id
      })
      changed(pageId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/maintenances/:maintenanceId/updates`,
    {
      schema: {
        tags,
        summary: 'Post a maintenance update, moving it forward (statuspages responder)',
        params: MaintenanceParams,
        body: Type.Object(
          { body: Body, status: Type.Optional(MaintenanceStatusSchema), notify: Type.Optional(Type.Boolean({ default: true })) },
          { additionalProperties: false },
        ),
        response: { 201: IncidentUpdate },
      },
      onRequest: responder,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const result = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const maintenance = await maintenanceOf(trx, organizationId, page.id, request.params.maintenanceId, true)
        const from = maintenance.status as MaintenanceStatus
        const status = request.body.status ?? from
        if (!maintenanceMayMove(from, status)) throw invalidField('status', `a ${from} maintenance cannot move to ${status}`)
        const { row, update } = await recordUpdate(trx, notifications, maintenance, {
          status,
          body: request.body.body,
          statuses: new Map(),
          createdBy: request.user.userId,
          notify: request.body.notify ?? true,
        })
        await quietMonitoring(trx, quieter, row)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_maintenance', row.id),
          action: 'status_maintenance.update_posted',
          before: { status: from },
          after: { status: row.status },
        })
        return { pageId: page.id, update }
      })
      changed(result.pageId)
      return reply.code(201).send(updateBody(result.update))
    },
  )
}
