import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import {
  deleteWebhookConfig,
  findWebhookConfig,
  insertWebhookConfig,
  listWebhookConfigs,
  rotateWebhookKey,
  storedRoutingRules,
  updateWebhookConfig,
  type WebhookConfigRow,
} from './queries.js'
import {
  ConfigParams,
  CreateWebhookConfig,
  type Priority,
  type WebhookFormat,
  RegenerateKey,
  UpdateWebhookConfig,
  WebhookConfig,
  WebhookConfigWithSecrets,
} from './schemas.js'
import { generateApiKey, generateSigningSecret } from './secrets.js'
import { pageOf, type Executor } from '@svc/db'
import { policiesAmong, type RoutingRule } from '../../oncall/index.js'

/** The policies a config names must be the organization's: 400 naming the field otherwise. */
async function checkRouting(
  db: Executor,
  organizationId: string,
  change: { escalationPolicyId?: string | null; routingRules?: RoutingRule[] },
) {
  const named = [
    ...(change.escalationPolicyId ? [change.escalationPolicyId] : []),
    ...(change.routingRules ?? []).map((rule) => rule.escalationPolicyId),
  ]
  const known = await policiesAmong(db, organizationId, [...new Set(named)])
  if (change.escalationPolicyId && !known.has(change.escalationPolicyId)) {
    throw invalidField('escalationPolicyId', 'is not an escalation policy of the organization')
  }
  change.routingRules?.forEach((rule, index) => {
    if (!known.has(rule.escalationPolicyId)) {
      throw invalidField(`routingRules/${index}/escalationPolicyId`, 'is not an escalation policy of the organization')
    }
  })
}

const tags = ['webhooks']
const OrgParams = Type.Object({ orgId: Type.String() })
export const INGEST_PATH = '/api/v1/webhooks/ingest'

function configBody(row: WebhookConfigRow) {
  return {
    id: row.id,
    name: row.name,
    // The table's check constraints hold these to the schema's lists.
    format: row.format as WebhookFormat,
    enabled: row.enabled,
    defaultPriority: row.defaultPriority as Priority,
    autoAnalysis: row.autoAnalysis,
    groupWindowSeconds: row.groupWindowSeconds,
    rateLimitPerMinute: row.rateLimitPerMinute,
    escalationPolicyId: row.escalationPolicyId,
    // Written only from the validated request body (RoutingRules).
    routingRules: storedRoutingRules(row.routingRules),
    keyPrefix: row.apiKeyPrefix,
    signed: row.signed,
    createdBy: row.createdBy,
    keyRotatedAt: row.keyRotatedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** What the audit log keeps of a configuration: its settings, never its key or secret. */
function audited(row: WebhookConfigRow) {
  const { name, format, enabled, defaultPriority, autoAnalysis, groupWindowSeconds, rateLimitPerMinute, signed } = row
  return {
    escalationPolicyId: row.escalationPolicyId,
    routingRules: row.routingRules,
    name,
    format,
    enabled,
    defaultPriority,
    autoAnalysis,
    groupWindowSeconds,
    rateLimitPerMinute,
    signed,
    keyPrefix: row.apiKeyPrefix,
  }
}

/**
 * Webhook configurations (spec: "Product API: webhook configuration, ingestion, usage"). Any
 * member reads them; changing them needs the alerting role manager (owners and platform
 * admins pass). The API key and a generated signing secret are answered once.
 */
export const webhookConfigRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const alertingManager = app.requireProductRole('alerting', 'manager')
  const findConfig = async (organizationId: string, configId: string) => {
    const row = isUuid(configId) ? await findWebhookConfig(db, organizationId, configId) : undefined
    if (!row) throw new NotFoundError('webhook config')
    return row
  }

  app.get(
    '/api/v1/organizations/:orgId/webhooks',
    {
      schema: {
        tags,
        summary: 'List webhook configs (member)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(WebhookConfig) },
      },
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listWebhookConfigs(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(configBody), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/webhooks/:configId',
    { schema: { tags, summary: 'Get a webhook config (member)', params: ConfigParams, response: { 200: WebhookConfig } } },
    async (request) => configBody(await findConfig(membershipOf(request).organizationId, request.params.configId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/webhooks',
    {
      schema: {
        tags,
        summary: 'Create a webhook config (alerting manager); answers its API key once',
        description: 'Give `signingSecret` (16 characters or more) or `"signed": true` to require signed deliveries.',
        params: OrgParams,
        body: CreateWebhookConfig,
        response: { 201: WebhookConfigWithSecrets },
      },
      onRequest: alertingManager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { signed, signingSecret: given, ...settings } = request.body
      if (given !== undefined && signed === false) throw invalidField('signed', 'cannot be false with a signingSecret')
      const generated = given === undefined && signed === true ? generateSigningSecret() : undefined
      const key = generateApiKey()
      const row = await db.transaction().execute(async (trx) => {
        await checkRouting(trx, organizationId, settings)
        const created = await insertWebhookConfig(trx, {
          organizationId,
          name: settings.name,
          format: settings.format ?? 'generic',
          enabled: settings.enabled ?? true,
          defaultPriority: settings.defaultPriority ?? 'P3',
          autoAnalysis: settings.autoAnalysis ?? false,
          groupWindowSeconds: settings.groupWindowSeconds ?? 300,
          rateLimitPerMinute: settings.rateLimitPerMinute ?? null,
          escalationPolicyId: settings.escalationPolicyId ?? null,
          routingRules: settings.routingRules ?? [],
          apiKeyPrefix: key.prefix,
          apiKeyHash: key.hash,
          signingSecret: given ?? generated ?? null,
          createdBy: request.user.userId,
        })
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'webhook_config',
          entityId: created.id,
          action: 'webhook_config.created',
          after: audited(created),
        })
        return created
      })
      return reply.code(201).send({
        ...configBody(row),
        apiKey: key.apiKey,
        ingestPath: `${INGEST_PATH}/${key.apiKey}`,
        ...(generated ? { signingSecret: generated } : {}),
      })
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/webhooks/:configId',
    {
      schema: {
        tags,
        summary: 'Update a webhook config (alerting manager)',
        params: ConfigParams,
        body: UpdateWebhookConfig,
        response: { 200: WebhookConfig },
      },
      onRequest: alertingManager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const before = await findConfig(organizationId, request.params.configId)
      const { routingRules, ...settings } = request.body
      const row = await db.transaction().execute(async (trx) => {
        await checkRouting(trx, organizationId, request.body)
        const after = await updateWebhookConfig(trx, organizationId, before.id, {
          ...settings,
          ...(routingRules ? { routingRules: routingRules } : {}),
        })
        if (!after) throw new NotFoundError('webhook config')
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'webhook_config',
          entityId: before.id,
          action: 'webhook_config.updated',
          before: audited(before),
          after: audited(after),
        })
        return after
      })
      return configBody(row)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/webhooks/:configId/regenerate-key',
    {
      schema: {
        tags,
        summary: 'Regenerate the API key (alerting manager); the old key is refused at once',
        params: ConfigParams,
        querystring: RegenerateKey,
        response: { 200: WebhookConfigWithSecrets },
      },
      onRequest: alertingManager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const before = await findConfig(organizationId, request.params.configId)
      const key = generateApiKey()
      const signingSecret = request.query.rotateSigningSecret ? generateSigningSecret() : undefined
      const row = await db.transaction().execute(async (trx) => {
        const after = await rotateWebhookKey(trx, organizationId, before.id, {
          apiKeyPrefix: key.prefix,
          apiKeyHash: key.hash,
          ...(signingSecret ? { signingSecret } : {}),
        })
        if (!after) throw new NotFoundError('webhook config')
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'webhook_config',
          entityId: before.id,
          action: 'webhook_config.key_regenerated',
          before: { keyPrefix: before.apiKeyPrefix },
          after: { keyPrefix: after.apiKeyPrefix, signingSecretRotated: signingSecret !== undefined },
        })
        return after
      })
      return {
        ...configBody(row),
        apiKey: key.apiKey,
        ingestPath: `${INGEST_PATH}/${key.apiKey}`,
        ...(signingSecret ? { signingSecret } : {}),
      }
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/webhooks/:configId',
    {
      schema: {
        tags,
        summary: 'Delete a webhook config (alerting manager); its key stops working',
        params: ConfigParams,
        response: { 204: Type.Null() },
      },
      onRequest: alertingManager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const before = await findConfig(organizationId, request.params.configId)
      await db.transaction().execute(async (trx) => {
        if (!(await deleteWebhookConfig(trx, organizationId, before.id))) throw new NotFoundError('webhook config')
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'alerting',
          entityType: 'webhook_config',
          entityId: before.id,
          action: 'webhook_config.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )
}
