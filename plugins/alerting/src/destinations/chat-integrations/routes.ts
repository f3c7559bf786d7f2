import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import type { OutboundConfig } from '@svc/config'
import { pageOf, type Executor } from '@svc/db'
import { ConflictError, ListResponse, NotFoundError, Timestamp, UpstreamError, invalidField } from '@svc/http'
import { removeTargetEverywhere } from '../../oncall/index.js'
import { TargetRefused, checkTarget } from '../http.js'
import {
  chatNameTaken,
  deleteChatIntegration,
  findChatIntegration,
  insertChatIntegration,
  listChatIntegrations,
  updateChatIntegration,
  type ChatIntegrationRow,
} from './queries.js'
import { slackCommandPath, slackInteractivityPath } from './paths.js'
import type { ChatSender } from './send.js'

const tags = ['chat']
const kinds = ['slack', 'teams', 'discord', 'slack_bot'] as const
const OrgParams = Type.Object({ orgId: Type.String() })
const IntegrationParams = Type.Object({ orgId: Type.String(), integrationId: Type.String() })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const WebhookUrl = Type.String({
  minLength: 10,
  maxLength: 2000,
  description: 'The incoming webhook URL (slack, teams, discord); a credential, never answered',
})
const BotToken = Type.String({
  pattern: '^xox[bp]-[A-Za-z0-9-]+$',
  maxLength: 300,
  description: 'A Slack bot token (slack_bot); never answered',
})
const Channel = Type.String({ minLength: 1, maxLength: 100, description: 'The Slack channel id or name (slack_bot)' })
const SigningSecret = Type.String({
  pattern: '^[A-Za-z0-9]{16,128}$',
  description:
    'The Slack app’s signing secret (slack_bot): with it, pages and incidents carry buttons and `/incident` works; never answered',
})
const IncidentChannels = Type.Boolean({
  description: 'slack_bot with a signing secret: every new incident gets a channel of its own (conversations.create), its people invited',
})

const ChatIntegration = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.Enum(kinds, { description: 'slack, teams, discord: incoming webhooks; slack_bot: Slack’s Web API (chat.postMessage)' }),
    target: Type.String({ description: 'Where it posts, without its credential: the webhook’s host, or the Slack channel' }),
    enabled: Type.Boolean(),
    interactive: Type.Boolean({ description: 'A signing secret is set: buttons and the slash command work' }),
    incidentChannels: Type.Boolean(),
    slack: Type.Union(
      [
        Type.Object({
          interactivityUrl: Type.String({ description: 'Paste as the Slack app’s Interactivity Request URL' }),
          commandUrl: Type.String({ description: 'Paste as the Request URL of the app’s `/incident` slash command' }),
        }),
        Type.Null(),
      ],
      { description: 'slack_bot: where the Slack app sends button presses and slash commands' },
    ),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'ChatIntegration' },
)

const CreateIntegration = Type.Object(
  {
    name: Name,
    kind: Type.Enum(kinds),
    webhookUrl: Type.Optional(WebhookUrl),
    botToken: Type.Optional(BotToken),
    channel: Type.Optional(Channel),
    signingSecret: Type.Optional(SigningSecret),
    incidentChannels: Type.Optional(IncidentChannels),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
const UpdateIntegration = Type.Object(
  {
    name: Type.Optional(Name),
    webhookUrl: Type.Optional(WebhookUrl),
    botToken: Type.Optional(BotToken),
    channel: Type.Optional(Channel),
    signingSecret: Type.Optional(Type.Union([SigningSecret, Type.Null()], { description: 'null turns buttons and the command off' })),
    incidentChannels: Type.Optional(IncidentChannels),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)

function targetOf(row: ChatIntegrationRow): string {
  if (row.kind === 'slack_bot') return `#${(row.channel ?? '').replace(/^#/, '')}`
  try {
    return new URL(row.webhookUrl ?? '').host
  } catch {
    return ''
  }
}

const bodyOf = (productUrl: string) => (row: ChatIntegrationRow) => ({
  id: row.id,
  name: row.name,
  kind: row.kind as (typeof kinds)[number],
  target: targetOf(row),
  enabled: row.enabled,
  interactive: row.signingSecret !== null,
  incidentChannels: row.incidentChannels,
  slack:
    row.kind === 'slack_bot'
      ? {
          interactivityUrl: `${productUrl}${slackInteractivityPath(row.id)}`,
          commandUrl: `${productUrl}${slackCommandPath(row.id)}`,
        }
      : null,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

/** What the audit log keeps: never the URL or token, only that they changed. */
const audited = (row: ChatIntegrationRow) => ({
  name: row.name,
  kind: row.kind,
  target: targetOf(row),
  enabled: row.enabled,
  webhookUrl: row.webhookUrl ? 'set' : null,
  signingSecret: row.signingSecret ? 'set' : null,
  incidentChannels: row.incidentChannels,
})

export interface ChatRouteOptions {
  outbound: OutboundConfig
  sender: ChatSender
  productUrl: string
}

/**
 * Chat integrations: where escalation steps post alerts (target type `chat`).
 * Reading needs alerting viewer, changing and testing alerting manager; changes are audited.
 * Webhook URLs must point at public addresses unless ALLOW_PRIVATE_TARGETS is set.
 */
export const chatIntegrationRoutes: FastifyPluginAsyncTypebox<ChatRouteOptions> = async (app, { outbound, sender, productUrl }) => {
  const db = app.database.db
  const body = bodyOf(productUrl)
  const viewer = app.requireProductRole('alerting', 'viewer')
  const manager = app.requireProductRole('alerting', 'manager')
  const integrationOf = async (executor: Executor, organizationId: string, id: string, forUpdate = false) => {
    const row = isUuid(id) ? await findChatIntegration(executor, organizationId, id, forUpdate) : undefined
    if (!row) throw new NotFoundError('chat integration')
    return row
  }
  const entry = (organizationId: string, id: string) => ({
    organizationId,
    product: 'alerting' as const,
    entityType: 'chat_integration',
    entityId: id,
  })
  const checkUrl = async (url: string) => {
    try {
      await checkTarget(url, outbound)
    } catch (error) {
      if (error instanceof TargetRefused) throw invalidField('webhookUrl', error.message)
      throw error
    }
  }

  app.get(
    '/api/v1/organizations/:orgId/chat-integrations',
    {
      schema: {
        tags,
        summary: 'List chat integrations (alerting viewer)',
        params: OrgParams,
        querystring: Type.Object({
          page: Type.Integer({ minimum: 1, default: 1 }),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        }),
        response: { 200: ListResponse(ChatIntegration) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listChatIntegrations(db, membershipOf(request).organizationId, pageOf({ page, limit }))
      return { data: rows.map(body), meta: { page, limit, total } }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/chat-integrations/:integrationId',
    {
      schema: { tags, summary: 'A chat integration (alerting viewer)', params: IntegrationParams, response: { 200: ChatIntegration } },
      onRequest: viewer,
    },
    async (request) => body(await integrationOf(db, membershipOf(request).organizationId, request.params.integrationId)),
  )

  app.post(
    '/api/v1/organizations/:orgId/chat-integrations',
    {
      schema: {
        tags,
        summary: 'Add a chat integration (alerting manager)',
        description: '`webhookUrl` for slack, teams and discord; `botToken` and `channel` for slack_bot.',
        params: OrgParams,
        body: CreateIntegration,
        response: { 201: ChatIntegration },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const { kind, webhookUrl, botToken, channel, signingSecret, incidentChannels = false, enabled = true } = request.body
      const name = request.body.name.trim()
      if (kind === 'slack_bot') {
        if (!botToken) throw invalidField('botToken', 'is required for slack_bot')
        if (!channel) throw invalidField('channel', 'is required for slack_bot')
        if (webhookUrl) throw invalidField('webhookUrl', 'is not used by slack_bot')
        if (incidentChannels && !signingSecret) throw invalidField('incidentChannels', 'needs a signingSecret')
      } else {
        if (!webhookUrl) throw invalidField('webhookUrl', `is required for ${kind}`)
        const slackOnly = botToken
          ? 'botToken'
          : channel
            ? 'channel'
            : signingSecret
              ? 'signingSecret'
              : incidentChannels
                ? 'incidentChannels'
                : undefined
        if (slackOnly) throw invalidField(slackOnly, `is not used by ${kind}`)
        await checkUrl(webhookUrl)
      }
      const created = await db.transaction().execute(async (trx) => {
        if (await chatNameTaken(trx, organizationId, name)) throw new ConflictError(`a chat integration named ${name} exists`)
        const row = await insertChatIntegration(trx, {
          organizationId,
          name,
          kind,
          webhookUrl: webhookUrl ?? null,
          botToken: botToken ?? null,
          channel: channel ?? null,
          signingSecret: signingSecret ?? null,
          incidentChannels,
          enabled,
          createdBy: request.user.userId,
        })
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, row.id),
          action: 'chat_integration.created',
          after: audited(row),
        })
        return row
      })
      return reply.code(201).send(body(created))
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/chat-integrations/:integrationId',
    {
      schema: {
        tags,
        summary: 'Change a chat integration (alerting manager)',
        params: IntegrationParams,
        body: UpdateIntegration,
        response: { 200: ChatIntegration },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { webhookUrl, botToken, channel, signingSecret, incidentChannels, enabled } = request.body
      const name = request.body.name?.trim()
      // DNS is not resolved while the row is locked.
      if (webhookUrl) await checkUrl(webhookUrl)
      const updated = await db.transaction().execute(async (trx) => {
        const before = await integrationOf(trx, organizationId, request.params.integrationId, true)
        if (before.kind === 'slack_bot' && webhookUrl) throw invalidField('webhookUrl', 'is not used by slack_bot')
        if (before.kind !== 'slack_bot') {
          const slackOnly = botToken
            ? 'botToken'
            : channel
              ? 'channel'
              : signingSecret !== undefined
                ? 'signingSecret'
                : incidentChannels !== undefined
                  ? 'incidentChannels'
                  : undefined
          if (slackOnly) throw invalidField(slackOnly, `is not used by ${before.kind}`)
        }
        const secretAfter = signingSecret === undefined ? before.signingSecret : signingSecret
        if ((incidentChannels ?? before.incidentChannels) && !secretAfter) throw invalidField('incidentChannels', 'needs a signingSecret')
        if (name && (await chatNameTaken(trx, organizationId, name, before.id)))
          throw new ConflictError(`a chat integration named ${name} exists`)
        const after = await updateChatIntegration(trx, organizationId, before.id, {
          ...(name ? { name } : {}),
          ...(webhookUrl ? { webhookUrl } : {}),
          ...(botToken ? { botToken } : {}),
          ...(channel ? { channel } : {}),
          ...(signingSecret !== undefined ? { signingSecret } : {}),
          ...(incidentChannels !== undefined ? { incidentChannels } : {}),
          ...(enabled !== undefined ? { enabled } : {}),
        })
        if (!after) throw new NotFoundError('chat integration')
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'chat_integration.updated',
          before: audited(before),
          after: { ...audited(after), ...(webhookUrl || botToken || signingSecret ? { credential: 'replaced' } : {}) },
        })
        return after
      })
      return body(updated)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/chat-integrations/:integrationId',
    {
      schema: {
        tags,
        summary: 'Delete a chat integration; escalation policies naming it lose that target, audited (alerting manager)',
        params: IntegrationParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await integrationOf(trx, organizationId, request.params.integrationId, true)
        await removeTargetEverywhere(trx, auditContextOf(request), organizationId, { type: 'chat', id: before.id })
        await deleteChatIntegration(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          ...entry(organizationId, before.id),
          action: 'chat_integration.deleted',
          before: audited(before),
        })
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/chat-integrations/:integrationId/test',
    {
      schema: {
        tags,
        summary: 'Post a test message now (alerting manager); 502 with the chat service’s answer when it fails',
        params: IntegrationParams,
        response: { 200: Type.Object({ delivered: Type.Literal(true) }) },
      },
      onRequest: manager,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const integration = await integrationOf(db, organizationId, request.params.integrationId)
      try {
        await sender.send(integration, {
          priority: 'P5',
          title: `Test message from Incident Platform (${integration.name})`,
          service: null,
          source: 'test',
          status: 'resolved',
          alertUrl: `${productUrl}/api/v1/organizations/${organizationId}/chat-integrations/${integration.id}`,
          reason: 'Sent with POST …/chat-integrations/:id/test; alerts will look like this.',
        })
      } catch (error) {
        throw new UpstreamError(`the test message was not delivered: ${(error as Error).message}`)
      }
      return { delivered: true as const }
    },
  )
}
