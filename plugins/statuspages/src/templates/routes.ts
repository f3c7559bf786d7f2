import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ListResponse, NotFoundError, PaginationQuery, Timestamp } from '@svc/http'
import { checkComponents } from '../incidents/records.js'
import { incidentImpacts, incidentStatuses } from '../model.js'
import { auditEntry, pageOfRequest } from '../pages/access.js'
import {
  deleteTemplate,
  findTemplate,
  insertTemplate,
  listTemplates,
  updateTemplate,
  type TemplateFields,
  type TemplateRow,
} from '../queries/templates.js'
import { ComponentStatusInput, ComponentStatusSchema, MANAGED_BASE, PageParams, sliced, tags } from '../schemas.js'
import { checkTexts } from './apply.js'

const TemplateParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), templateId: Type.String() })
const Key = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
  description: 'How the template is named where it is used (the API’s `template`, Slack’s `template=`): lower case, digits and dashes',
})
const Text = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'The incident’s public name' }),
    body: Type.String({ minLength: 1, maxLength: 10_000, pattern: '\\S', description: 'Its first update' }),
  },
  { additionalProperties: false },
)
const Texts = Type.Record(Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$' }), Text, {
  minProperties: 1,
  description: 'The title and body in each of the page’s languages, by language tag; the page’s default language is required',
})
const templateFields = {
  key: Key,
  // No schema defaults: a change (PATCH) that leaves them out must not reset them.
  status: Type.Optional(Type.Enum(incidentStatuses, { description: 'The incident’s status when opened; unset: investigating' })),
  impact: Type.Optional(Type.Enum(incidentImpacts, { description: 'Its impact; unset: minor' })),
  components: Type.Optional(ComponentStatusInput),
  texts: Texts,
}
const Template = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    pageId: Type.String({ format: 'uuid' }),
    key: Type.String(),
    status: Type.Enum(incidentStatuses),
    impact: Type.Enum(incidentImpacts),
    components: Type.Array(Type.Object({ componentId: Type.String(), status: ComponentStatusSchema })),
    texts: Type.Record(Type.String(), Type.Object({ title: Type.String(), body: Type.String() })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'StatusIncidentTemplate' },
)

const templateBody = (row: TemplateRow) => ({
  id: row.id,
  pageId: row.pageId,
  key: row.key,
  status: row.status,
  impact: row.impact,
  components: row.components,
  texts: row.texts,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})
const audited = (row: TemplateRow) => ({ key: row.key, status: row.status, impact: row.impact, languages: Object.keys(row.texts) })

/**
 * A page's incident templates (issue 58; decision 0015, "Incident templates"): a named start for an
 * incident (its status, impact and the statuses it gives components) with its title and first
 * update in each of the page's languages. Opening an incident with `template` uses one; so do the
 * comms agent's drafts and Slack's `/incident statuspage`. Reading needs statuspages viewer,
 * changing statuspages manager.
 */
export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('statuspages', 'viewer')
  const manager = app.requireProductRole('statuspages', 'manager')
  const templateOf = async (executor: Executor, organizationId: string, pageId: string, id: string) => {
    const row = isUuid(id) ? await findTemplate(executor, organizationId, pageId, id) : undefined
    if (!row) throw new NotFoundError('incident template')
    return row
  }

  app.get(
    `${MANAGED_BASE}/pages/:pageId/incident-templates`,
    {
      schema: {
        tags,
        summary: 'A page’s incident templates, by key (statuspages viewer)',
        params: PageParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Template) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return sliced((await listTemplates(db, page.organizationId, page.id)).map(templateBody), request.query)
    },
  )

  app.get(
    `${MANAGED_BASE}/pages/:pageId/incident-templates/:templateId`,
    {
      schema: { tags, summary: 'An incident template (statuspages viewer)', params: TemplateParams, response: { 200: Template } },
      onRequest: viewer,
    },
    async (request) => {
      const page = await pageOfRequest(db, request)
      return templateBody(await templateOf(db, page.organizationId, page.id, request.params.templateId))
    },
  )

  app.post(
    `${MANAGED_BASE}/pages/:pageId/incident-templates`,
    {
      schema: {
        tags,
        summary: 'Add an incident template (statuspages manager)',
        params: PageParams,
        body: Type.Object(templateFields, { additionalProperties: false }),
        response: { 201: Template },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const row = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        checkTexts(request.body.texts, page.locales)
        const statuses = await checkComponents(trx, page, request.body.components ?? [])
        const fields: TemplateFields = {
          key: request.body.key,
          status: request.body.status ?? 'investigating',
          impact: request.body.impact ?? 'minor',
          components: [...statuses].map(([componentId, status]) => ({ componentId, status })),
          texts: request.body.texts,
        }
        const row = await insertTemplate(trx, organizationId, page.id, fields)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident_template', row.id),
          action: 'status_incident_template.created',
          after: audited(row),
        })
        return row
      })
      return reply.code(201).send(templateBody(row))
    },
  )

  app.patch(
    `${MANAGED_BASE}/pages/:pageId/incident-templates/:templateId`,
    {
      schema: {
        tags,
        summary: 'Change an incident template; `texts` is replaced whole (statuspages manager)',
        params: TemplateParams,
        body: Type.Object(
          { ...templateFields, key: Type.Optional(Key), texts: Type.Optional(Texts) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Template },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const row = await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const before = await templateOf(trx, organizationId, page.id, request.params.templateId)
        const { components, ...fields } = request.body
        if (fields.texts) checkTexts(fields.texts, page.locales)
        const statuses = components && (await checkComponents(trx, page, components))
        const row = await updateTemplate(trx, before.id, {
          ...fields,
          ...(statuses ? { components: [...statuses].map(([componentId, status]) => ({ componentId, status })) } : {}),
        })
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident_template', row.id),
          action: 'status_incident_template.updated',
          before: audited(before),
          after: audited(row),
        })
        return row
      })
      return templateBody(row)
    },
  )

  app.delete(
    `${MANAGED_BASE}/pages/:pageId/incident-templates/:templateId`,
    {
      schema: {
        tags,
        summary: 'Remove an incident template (statuspages manager)',
        params: TemplateParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const page = await pageOfRequest(trx, request, true)
        const row = await templateOf(trx, organizationId, page.id, request.params.templateId)
        await deleteTemplate(trx, row.id)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'status_incident_template', row.id),
          action: 'status_incident_template.deleted',
          before: audited(row),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
