import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { OutboundConfig } from '@svc/config'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, PaginationQuery, Timestamp, invalidField } from '@svc/http'
import { removeTargetEverywhere } from '../../oncall/index.js'
import { TargetRefused, checkTarget } from '../http.js'
import {
  deleteOutboundWebhook,
  findOutboundWebhook,
  insertOutboundWebhook,
  listDeliveries,
  listOutboundWebhooks,
  outboundNameTaken,
  updateOutboundWebhook,
  type OutboundWebhookRow,
} from './queries.js'
import { outboundEvents, type OutboundEvent } from './delivery.js'

const tags = ['outbound-webhooks']
const OrgParams = Type.Object({ orgId: Type.String() })
const WebhookParams = Type.Object({ orgId: Type.String(), webhookId: Type.String() })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Url = Type.String({
  minLength: 10,
  maxLength: 2000,
  description: 'Where deliveries are POSTed; a public address unless ALLOW_PRIVATE_TARGETS',
})
const Events = Type.Array(Type.Enum(outboundEvents), {
  minItems: 1,
  uniqueItems: true,
  description: 'alert.escalated is sent when an escalation step names the webhook as a target',
})

const OutboundWebhook = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.Enum(outboundEvents)),
    enabled: Type.Boolean(),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'OutboundWebhook' },
)
const WithSecret = Type.Object(
  { ...OutboundWebhook.properties, secret: Type.String({ description: 'Shown once: the Standard Webhooks signing secret (whsec_…)' }) },
  { title: 'OutboundWebhookWithSecret' },
)
const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The webhook-id header is msg_<id>' }),
    event: Type.String({
      description: 'One of the webhook’s events, or the trigger of the workflow that sent it (deploy.recorded, incident.declared, …)',
    }),
    alertId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    status: Type.Enum(['pending', 'delivered', 'failed'] as const),
    attempts: Type.Integer(),
    responseStatus: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deliveredAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'OutboundWebhookDelivery' },
)

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`

const body = (row: OutboundWebhookRow) => ({
  id: row.id,
  name: row.name,
  url: row.url,
  events: row.events as OutboundEvent[],
  enabled: row.enabled,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})
const audited = (row: OutboundWebhookRow) => ({ name: row.name, url: row.url, events: row.events, enabled: row.enabled })

/**
 * Outbound incident webhooks: alert events POSTed to a URL, signed per Standard
 * Webhooks, retried with backoff, every delivery logged. Reading needs alerting viewer,
 * changing alerting manager; changes are audited (never the secret).
 */
export const outboundWebhookRoutes: FastifyPluginAsyncTypebox<{ outbound: OutboundConfig }> = async (app, { outbound }) => {
  const db = app.database.db
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const webhookOf = async (executor: Executor, organizationId: string, id: string, forUpdate = false) => {
    const row = isUuid(id) ? await findOutboundWebhook(executor, organizationId, id, forUpdate) : undefined
    if (!row) throw new NotFoundError('outbound webhook')
    return row
  }
  const entry = (organizationId: string, id: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'outbound_webhook',
    entityId: id,
  })
  const checkUrl = async (url: string) => {
    try {
      await checkTarget(url, outbound)
    } catch (error) {
      if (error instanceof TargetRefused) throw invalidField('url', error.message)
      throw error
    }
  }

  app.get(
    '/api/v1/organizations/:orgId/outbound-webhooks',
    {
      schema: {
        tags,
        summary: 'List outbound webhooks (alerting viewer)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(OutboundWebhook) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listOutboundWebhooks(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(body), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/outbound-webhooks/:webhookId',
    {
      schema: { tags, summary: 'An outbound webhook (alerting viewer)', params: WebhookParams, response: { 200: OutboundWebhook } },
      onRequest: viewer,
    },
    async (request) => body(await webhookOf(db, membershipOf(request).organizationId, request.params.webhookId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/outbound-webhooks',
    {
      schema: {
        tags,
        summary: 'Add an outbound webhook (alerting manager); answers its signing secret once',
        params: OrgParams,
        body: Type.Object(
          { name: Name, url: Url, events: Events, enabled: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 201: WithSecret },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { url, events, enabled = true } = request.body
      const name = request.body.name.trim()
      await checkUrl(url)
      const secret = newSecret()
      const created = await db.transaction().execute(async (trx) => {
        if (await outboundNameTaken(trx, organizationId, name)) throw new ConflictError(`an outbound webhook named ${name} exists`)
        const row = await insertOutboundWebhook(trx, { organizationId, name, url, events, secret, enabled, createdBy: request.user.userId })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, row.id),
          action: 'outbound_webhook.created',
          after: audited(row),
        })
        return row
      })
      return reply.code(201).send({ ...body(created), secret })
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/outbound-webhooks/:webhookId',
    {
      schema: {
        tags,
        summary: 'Change an outbound webhook (alerting manager)',
        params: WebhookParams,
        body: Type.Object(
          { name: Type.Optional(Name), url: Type.Optional(Url), events: Type.Optional(Events), enabled: Type.Optional(Type.Boolean()) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: OutboundWebhook },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const name = request.body.name?.trim()
      if (request.body.url) await checkUrl(request.body.url)
      return body(
        await db.transaction().execute(async (trx) => {
          const before = await webhookOf(trx, organizationId, request.params.webhookId, true)
          if (name && (await outboundNameTaken(trx, organizationId, name, before.id)))
            throw new ConflictError(`an outbound webhook named ${name} exists`)
          const after = await updateOutboundWebhook(trx, organizationId, before.id, { ...request.body, ...(name ? { name } : {}) })
          if (!after) throw new NotFoundError('outbound webhook')
          await recordAudit(trx, auditContextOf(request), {
            ...entry(organizationId, before.id),
            action: 'outbound_webhook.updated',
            before: audited(before),
            after: audited(after),
          })
          return after
        }),
      )
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/outbound-webhooks/:webhookId/rotate-secret',
    {
      schema: {
        tags,
        summary: 'A new signing secret (alerting manager); answered once, the old one stops signing at once',
        params: WebhookParams,
        response: { 200: WithSecret },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const secret = newSecret()
      const rotated = await db.transaction().execute(async (trx) => {
        const before = await webhookOf(trx, organizationId, request.params.webhookId, true)
        const after = await updateOutboundWebhook(trx, organizationId, before.id, { secret })
        if (!after) throw new NotFoundError('outbound webhook')
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'outbound_webhook.secret_rotated',
          after: { secret },
        })
        return after
      })
      return { ...body(rotated), secret }
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/outbound-webhooks/:webhookId',
    {
      schema: {
        tags,
        summary: 'Delete an outbound webhook and its delivery log; policies naming it lose that target (alerting manager)',
        params: WebhookParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await webhookOf(trx, organizationId, request.params.webhookId, true)
        await removeTargetEverywhere(trx, auditContextOf(request), organizationId, { type: 'webhook', id: before.id })
        await deleteOutboundWebhook(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'outbound_webhook.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/outbound-webhooks/:webhookId/deliveries',
    {
      schema: {
        tags,
        summary: 'The delivery log, newest first (alerting viewer)',
        params: WebhookParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(Delivery) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const webhook = await webhookOf(db, organizationId, request.params.webhookId)
      const { page, limit } = request.query
      const { rows, total } = await listDeliveries(db, organizationId, webhook.id, pageOf({ page, limit }))
      return {
        data: rows.map((row) => ({
          ...row,
          event: row.event,
          status: row.status as 'pending' | 'delivered' | 'failed',
          createdAt: row.createdAt.toISOString(),
          updatedAt: row.updatedAt.toISOString(),
          deliveredAt: row.deliveredAt?.toISOString() ?? null,
        })),
        meta: { page, limit, total },
      }
    },
  )
}
