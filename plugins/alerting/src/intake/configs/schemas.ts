import { Type } from 'typebox'
import { RoutingRule, RoutingRules } from '../../oncall/index.js'
import { priorities, webhookFormats } from '../../alerts/index.js'

export { priorities, webhookFormats, type Priority, type WebhookFormat } from '../../alerts/index.js'

export const ConfigParams = Type.Object({ orgId: Type.String(), configId: Type.String() })

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'e.g. "Prometheus production"' })
const Format = Type.Enum(webhookFormats, { description: 'How ingested bodies are read' })
const Priority = Type.Enum(priorities)
const GroupWindow = Type.Integer({
  minimum: 0,
  maximum: 86_400,
  description: 'Alerts with one group key within this many seconds join one group',
})
const RateLimitPerMinute = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: 'Deliveries accepted per minute for this config (429 past it); null: the service default (INGEST_RATE_LIMIT_MAX, 6,000)',
})
const SigningSecret = Type.String({
  minLength: 16,
  maxLength: 256,
  description: 'HMAC-SHA256 key for x-webhook-signature, 16 characters or more',
})

export const WebhookConfig = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    format: Format,
    enabled: Type.Boolean(),
    defaultPriority: Priority,
    autoAnalysis: Type.Boolean({ description: 'Ingested events get an automatic analysis' }),
    groupWindowSeconds: Type.Integer(),
    rateLimitPerMinute: Type.Union([RateLimitPerMinute, Type.Null()]),
    keyPrefix: Type.String({ description: 'The first characters of the API key, to tell keys apart' }),
    signed: Type.Boolean({ description: 'Ingested requests must carry a valid x-webhook-signature' }),
    escalationPolicyId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The policy new alerts escalate with when no routing rule matches; null: they page no one',
    }),
    routingRules: Type.Array(RoutingRule),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    keyRotatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookConfig' },
)

/** The answer of create and regenerate-key: the only time the key (and a new secret) is shown. */
export const WebhookConfigWithSecrets = Type.Object(
  {
    ...WebhookConfig.properties,
    apiKey: Type.String({ description: 'Shown once: only its SHA-256 hash is kept' }),
    ingestPath: Type.String({ description: 'Where to send events: POST here' }),
    signingSecret: Type.Optional(Type.String({ description: 'Shown once, when generated or rotated' })),
  },
  { title: 'WebhookConfigWithSecrets' },
)

export const CreateWebhookConfig = Type.Object(
  {
    name: Name,
    format: Type.Optional(Format),
    enabled: Type.Optional(Type.Boolean()),
    defaultPriority: Type.Optional(Priority),
    autoAnalysis: Type.Optional(Type.Boolean()),
    groupWindowSeconds: Type.Optional(GroupWindow),
    rateLimitPerMinute: Type.Optional(Type.Union([RateLimitPerMinute, Type.Null()])),
    signingSecret: Type.Optional(SigningSecret),
    signed: Type.Optional(Type.Boolean({ description: 'true: generate a signing secret (answered once)' })),
    escalationPolicyId: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'uuid' })),
    routingRules: Type.Optional(RoutingRules),
  },
  { additionalProperties: false },
)

export const UpdateWebhookConfig = Type.Object(
  {
    name: Type.Optional(Name),
    format: Type.Optional(Format),
    enabled: Type.Optional(Type.Boolean()),
    defaultPriority: Type.Optional(Priority),
    autoAnalysis: Type.Optional(Type.Boolean()),
    groupWindowSeconds: Type.Optional(GroupWindow),
    rateLimitPerMinute: Type.Optional(Type.Union([RateLimitPerMinute, Type.Null()])),
    signingSecret: Type.Optional(
      Type.Union([SigningSecret, Type.Null()], { description: 'A new secret, or null to stop requiring signatures' }),
    ),
    escalationPolicyId: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'uuid' })),
    routingRules: Type.Optional(RoutingRules),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const RegenerateKey = Type.Object(
  { rotateSigningSecret: Type.Optional(Type.Boolean({ description: 'Also generate a new signing secret (answered once)' })) },
  { additionalProperties: false },
)
