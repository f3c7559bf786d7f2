import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind } from '../kind.js'
import { Name } from './fields.js'

const EnvName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable apply reads the credential from' })
const Chat = Type.Object(
  {
    name: Name,
    kind: Type.Enum(['slack', 'teams', 'discord', 'slack_bot']),
    enabled: Type.Optional(Type.Boolean()),
    channel: Type.Optional(Type.String({ minLength: 1, description: 'slack_bot: the channel id or name' })),
    incidentChannels: Type.Optional(Type.Boolean()),
    credentialsFrom: Type.Optional(
      Type.Object(
        { webhookUrl: Type.Optional(EnvName), botToken: Type.Optional(EnvName), signingSecret: Type.Optional(EnvName) },
        {
          additionalProperties: false,
          description:
            'Where apply finds its credentials: environment variables, never the file. Read when it is created, or changed for another reason',
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'ChatIntegration' },
)
type Chat = Static<typeof Chat>
type Credential = 'webhookUrl' | 'botToken' | 'signingSecret'

const envName = (chat: { name: string }, credential: Credential) =>
  `DIVINUX_CHAT_${chat.name.toUpperCase().replaceAll(/[^A-Z0-9]+/g, '_')}_${credential.replaceAll(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`
const channelOf = (channel: string | undefined) => (channel?.startsWith('#') ? channel.slice(1) : channel)

/** The credentials the environment holds for the integration, by the variables its entry names. */
function credentials(env: Context['env'], chat: Chat): Partial<Record<Credential, string>> {
  const found: Partial<Record<Credential, string>> = {}
  for (const [credential, variable] of Object.entries(chat.credentialsFrom ?? {}) as Array<[Credential, string]>)
    if (env[variable]) found[credential] = env[variable]
  return found
}

/** Chat integrations, without their credentials: the file names the environment variables apply reads them from. */
export const chatIntegrations: Kind<Chat> = {
  noun: 'chat integration',
  file: 'chat-integrations.yaml',
  key: 'chatIntegrations',
  entry: Chat,
  names: 'chat',
  unseen: ['credentialsFrom'],
  identity: (chat) => chat.name,
  references: () => [],
  normal: (chat) => ({ ...chat, ...(chat.channel === undefined ? {} : { channel: channelOf(chat.channel) }) }),
  creatable: ({ env }, chat) => {
    const needed: Credential = chat.kind === 'slack_bot' ? 'botToken' : 'webhookUrl'
    const variable = chat.credentialsFrom?.[needed]
    if (!variable)
      return [{ at: ['credentialsFrom', needed], message: `creating it needs its ${needed}: name the environment variable that holds it` }]
    if (!env[variable])
      return [
        { at: ['credentialsFrom', needed], message: `the environment variable ${variable} is not set (creating it needs its ${needed})` },
      ]
    return []
  },

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/chat-integrations', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the chat integrations',
    )
    return rows.map((row) => ({
      id: row.id,
      entry: {
        name: row.name,
        kind: row.kind,
        enabled: row.enabled,
        ...(row.kind === 'slack_bot' ? { channel: channelOf(row.target), incidentChannels: row.incidentChannels } : {}),
        credentialsFrom:
          row.kind === 'slack_bot'
            ? { botToken: envName(row, 'botToken'), ...(row.interactive ? { signingSecret: envName(row, 'signingSecret') } : {}) }
            : { webhookUrl: envName(row, 'webhookUrl') },
      },
    }))
  },

  async create({ connection: { api, orgId }, env }, chat) {
    const { credentialsFrom: _from, ...settings } = chat
    await answered(
      api.POST('/api/v1/organizations/{orgId}/chat-integrations', {
        params: { path: { orgId } },
        body: { ...settings, ...credentials(env, chat) },
      }),
      `creating the chat integration ${chat.name}`,
    )
  },

  async update({ connection: { api, orgId }, env }, live, chat) {
    const { credentialsFrom: _from, kind: _kind, ...settings } = chat
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/chat-integrations/{integrationId}', {
        params: { path: { orgId, integrationId: live.id } },
        body: { ...settings, ...credentials(env, chat) },
      }),
      `changing the chat integration ${chat.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/chat-integrations/{integrationId}', {
        params: { path: { orgId, integrationId: live.id } },
      }),
      `deleting the chat integration ${live.entry.name}`,
    )
  },
}

const Webhook = Type.Object(
  {
    name: Name,
    url: Type.String({ pattern: '^https?://\\S+$' }),
    events: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    title: 'OutboundWebhook',
    description: 'Its signing secret is made by the service and printed once when apply creates it',
  },
)
type Webhook = Static<typeof Webhook>

/** Outbound webhooks (Standard Webhooks): what they are sent and where; the secret is the service's. */
export const outboundWebhooks: Kind<Webhook> = {
  noun: 'outbound webhook',
  file: 'outbound-webhooks.yaml',
  key: 'outboundWebhooks',
  entry: Webhook,
  names: 'webhooks',
  identity: (webhook) => webhook.name,
  references: () => [],
  normal: (webhook) => ({ ...webhook, events: [...webhook.events].sort() }),

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/outbound-webhooks', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the outbound webhooks',
    )
    return rows.map((row) => ({
      id: row.id,
      entry: { name: row.name, url: row.url, events: [...row.events].sort(), enabled: row.enabled },
    }))
  },

  async create({ connection: { api, orgId } }, webhook) {
    const created = await answered(
      api.POST('/api/v1/organizations/{orgId}/outbound-webhooks', { params: { path: { orgId } }, body: webhook as never }),
      `creating the outbound webhook ${webhook.name}`,
    )
    return [`its signing secret (shown once): ${created.secret}`]
  },

  async update({ connection: { api, orgId } }, live, webhook) {
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/outbound-webhooks/{webhookId}', {
        params: { path: { orgId, webhookId: live.id } },
        body: webhook as never,
      }),
      `changing the outbound webhook ${webhook.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/outbound-webhooks/{webhookId}', { params: { path: { orgId, webhookId: live.id } } }),
      `deleting the outbound webhook ${live.entry.name}`,
    )
  },
}
