import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { publish } from '@svc/events'
import { isUuid, membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery, Timestamp, invalidField } from '@svc/http'
import { findIncident, listIncidents, updateIncident, type IncidentRow } from '../queries/incidents.js'
import { touchPage } from '../queries/pages.js'
import { templateByKey } from '../queries/templates.js'
import { templateStatuses, templateText } from '../templates/apply.js'
import { checkAudiences } from '../audiences/tags.js'
import { LocaleTag } from '../i18n/locales.js'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import {
  AudienceIdsInput,
  ComponentStatusInput,
  ImpactSchema,
  Incident,
  IncidentParams,
  IncidentStatusSchema,
  IncidentUpdate,
  MANAGED_BASE,
  PageParams,
  incidentBody,
  tags,
  updateBody,
} from '../schemas.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { servicesOfComponents } from './incident-follow.js'
import { checkComponents, openRecord, recordDetails, recordUpdate, removeRecord, setPublished } from './records.js'

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })
const Body = Type.String({ minLength: 1, maxLength: 10_000, pattern: '\\S', description: 'What the public reads' })
const Notify = Type.Optional(Type.Boolean({ default: true, description: 'Tell subscribers (published incidents only)' }))

const audited = (row: IncidentRow) => ({
  name: row.name,
  status: row.status,
  impact: row.impact,
  published: row.published,
  audienceIds: row.audienceIds,
})

/**
 * A page's incidents and their updates (issue 15). Reading needs statuspages viewer; opening,
 * changing and deleting incidents statuspages manager; posting updates statuspages responder.
 * An incident's components take the statuses it gives them while it is open and published,
 * and return when it resolves (unless another incident or a maintenance holds them).
 */
export const incidentRoutes: FastifyPluginAsyncTypebox<{
  notifications: SubscriberNotifications
  changed: (pageId: string) => void
}> = async (app, { notifications, changed }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const responder = app.requireProductRole('statuspages', 'responder')
  const manager = app.requireProductRole('statuspages', 'manager')
  const incidentOf = async (executor: Executor, organizationId: string, pageId: string, id: string, forUpdate = false) => {
    const row = isUuid(id) ? await findIncident(executor, organizationId, pageId, 'incident', id, forUpdate) : undefined
    if (!row) throw new NotFoundError('incident')
    return row
  }
  const answer = async (executor: Executor, row: IncidentRow) => {
    const details = (await recordDetails(executor, [row]))(row)
    return incidentBody(row, details.components, details.updates)
  }

  app.get(
    `${MANAGED_BASE}/pages/:pageId/incidents`,
    {
      schema: {
        tags,
        summary: 'A page’s incidents, newest first (statuspages viewer)',
        params: PageParams,
        querystring: Type.Object({ ...PaginationQuery.properties, status: Type.Optional(IncidentStatusSchema) }),
        response: { 200: ListResponse(Incident) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      const { page: number, limit, status } = request.query
      const { rows, total } = await listIncidents(db, page.organizationId, page.id, 'incident', { status }, pageOf({ page: number, limit }))
      const details = await recordDetails(db, rows)
      return {
        data: rows.map((row) => {
          const { components, updates } = details(row)
          return incidentBody(row, components, updates)
        }),
        meta: { page: number, limit, total },
      }
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/incidents/:incidentId`,
    {
      schema: { tags, summary: 'An incident with its updates (statuspages viewer)', params: IncidentParams, response: { 200: Incident } },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return answer(db, await incidentOf(db, page.organizationId, page.id, request.params.incidentId))
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/incidents`,
    {
      schema: {
        tags,
        summary: 'Open an incident with its first update, written or from a template (statuspages manager)',
        params: PageParams,
        body: Type.Object(
          {
            template: Type.Optional(
              Type.String({
                maxLength: 63,
                description:
                  'The key of one of the page’s incident templates: its title, body, status, impact and components, each unless given here',
              }),
            ),
            locale: Type.Optional(LocaleTag),
            name: Type.Optional(Name),
            body: Type.Optional(Body),
            status: Type.Optional(IncidentStatusSchema),
            impact: Type.Optional(ImpactSchema),
            components: Type.Optional(ComponentStatusInput),
            published: Type.Optional(Type.Boolean({ description: 'false: a draft, shown to nobody outside until published' })),
            audienceIds: Type.Optional(AudienceIdsInput),
            startedAt: Type.Optional(Timestamp),
            notify: Notify,
          },
          { additionalProperties: false },
        ),
        response: { 201: Incident },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { published = true, startedAt, notify = true } = request.body
      const created = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const template = request.body.template === undefined ? undefined : await templateByKey(trx, page.id, request.body.template)
        if (request.body.template !== undefined && !template)
          throw invalidField('template', 'is not an incident template of this status page')
        const text = template && templateText(template, page.locales, request.body.locale)
        const name = request.body.name ?? text?.title
        const body = request.body.body ?? text?.body
        if (name === undefined) throw invalidField('name', 'is required unless a template is named')
        if (body === undefined) throw invalidField('body', 'is required unless a template is named')
        const status = request.body.status ?? template?.status ?? 'investigating'
        const impact = request.body.impact ?? template?.impact ?? 'none'
        const statuses =
          request.body.components || !template
            ? await checkComponents(trx, page, request.body.components ?? [])
            : await templateStatuses(trx, page, template)
        const audienceIds = (await checkAudiences(trx, page, request.body.audienceIds)) ?? []
        const { row } = await openRecord(
          trx,
          notifications,
          {
            organizationId,
            pageId: page.id,
            kind: 'incident',
            name: name.trim(),
            status,
            impact,
            published,
            audienceIds,
            createdBy: request.user.userId,
            ...(startedAt ? { startedAt: new Date(startedAt) } : {}),
            ...(status === 'resolved' ? { resolvedAt: new Date() } : {}),
          },
          { status, body, statuses, createdBy: request.user.userId, notify },
        )
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident', row.id),
          action: 'status_incident.created',
          after: audited(row),
        })
        // Alerting may put it in one of its incidents (correlation by the services its components follow).
        if (status !== 'resolved')
          await publish(app.jobs, trx, 'statuspage.incident_opened', {
            organizationId,
            statusIncidentId: row.id,
            pageId: page.id,
            name: row.name,
            services: await servicesOfComponents(trx, [...statuses.keys()]),
            at: new Date().toISOString(),
          })
        return answer(trx, row)
      })
      changed(created.pageId)
      return reply.code(201).send(created)
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/incidents/:incidentId`,
    {
      schema: {
        tags,
        summary: 'Rename, change the impact of, or publish an incident (statuspages manager); its status moves by updates',
        params: IncidentParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            impact: Type.Optional(ImpactSchema),
            published: Type.Optional(Type.Boolean()),
            audienceIds: Type.Optional(AudienceIdsInput),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Incident },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await incidentOf(trx, organizationId, page.id, request.params.incidentId, true)
        const { published, ...fields } = request.body
        fields.audienceIds = await checkAudiences(trx, page, fields.audienceIds)
        let row = await updateIncident(trx, before.id, { ...fields, ...(fields.name ? { name: fields.name.trim() } : {}) })
        if (published !== undefined) row = await setPublished(trx, notifications, { ...row, published: before.published }, published)
        await touchPage(trx, page.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident', row.id),
          action: 'status_incident.updated',
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
    `${MANAGED_BASE}/pages/:pageId/incidents/:incidentId`,
    {
      schema: {
        tags,
        summary: 'Delete an incident; its components return (statuspages manager)',
        params: IncidentParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const pageId = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await incidentOf(trx, organizationId, page.id, request.params.incidentId, true)
        await removeRecord(trx, row)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident', row.id),
          action: 'status_incident.deleted',
          before: audited(row),
        })
        return page.id
      })
      changed(pageId)
      return reply.code(204).send(null)
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/incidents/:incidentId/updates`,
    {
      schema: {
        tags,
        summary: 'An incident’s updates, newest first (statuspages viewer)',
        params: IncidentParams,
        response: { 200: Type.Object({ data: Type.Array(IncidentUpdate) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      const row = await incidentOf(db, page.organizationId, page.id, request.params.incidentId)
      return { data: (await recordDetails(db, [row]))(row).updates.map(updateBody) }
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/incidents/:incidentId/updates`,
    {
      schema: {
        tags,
        summary: 'Post an incident update, moving its status and its components’ (statuspages responder)',
        params: IncidentParams,
        body: Type.Object(
          {
            body: Body,
            status: Type.Optional(IncidentStatusSchema),
            components: Type.Optional(ComponentStatusInput),
            displayAt: Type.Optional(Timestamp),
            notify: Notify,
          },
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
        const incident = await incidentOf(trx, organizationId, page.id, request.params.incidentId, true)
        const status = request.body.status ?? incident.status
        if (incident.status === 'resolved' && status !== 'resolved')
          throw invalidField('status', `a resolved incident cannot move back to ${status}`)
        const statuses = await checkComponents(trx, page, request.body.components ?? [])
        const { row, update } = await recordUpdate(trx, notifications, incident, {
          status,
          body: request.body.body,
          statuses,
          ...(request.body.displayAt ? { displayAt: new Date(request.body.displayAt) } : {}),
          createdBy: request.user.userId,
          notify: request.body.notify ?? true,
        })
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident', row.id),
          action: 'status_incident.update_posted',
          before: { status: incident.status },
          after: { status: row.status },
        })
        return { pageId: page.id, update }
      })
      changed(result.pageId)
      return reply.code(201).send(updateBody(result.update))
    },
  )
}
