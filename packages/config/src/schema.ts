import { Type, type Static } from 'typebox'

/** The environment contract of ARCHITECTURE.md ("Configuration contract"), one entry per variable. */
export const EnvironmentSchema = Type.Object({
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ default: './.data', minLength: 1 }),
  PLATFORM_PORT: Type.Integer({ default: 3004, minimum: 0, maximum: 65535 }),
  PRODUCT_PORT: Type.Integer({ default: 3003, minimum: 0, maximum: 65535 }),
  DEV_IDP_PORT: Type.Integer({ default: 3005, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1 }),
  AUTH_ISSUER: Type.Optional(Type.String({ pattern: '^https?://' })),
  AUTH_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  AUTH_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_TOKEN_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  AUTH_GROUPS_CLAIM: Type.String({ default: 'cognito:groups', minLength: 1 }),
  COOKIE_DOMAIN: Type.Optional(Type.String({ minLength: 1 })),
  ALLOWED_ORIGINS: Type.String({ default: '' }),
  TRUST_PROXY: Type.String({ default: 'false', minLength: 1 }),
  RATE_LIMIT_MAX: Type.Integer({ default: 1000, minimum: 1 }),
  RATE_LIMIT_WINDOW: Type.String({ default: '1 minute', minLength: 1 }),
  INGEST_RATE_LIMIT_MAX: Type.Integer({ default: 6000, minimum: 1 }),
  OPENAI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  OPENAI_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  AI_MODEL: Type.String({ default: 'gpt-4o-mini', minLength: 1 }),
  AI_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100 }),
  AI_RETRY_LIMIT: Type.Integer({ default: 3, minimum: 0, maximum: 20 }),
  AI_RETRY_DELAY_SECONDS: Type.Integer({ default: 30, minimum: 1 }),
  AI_INPUT_PRICE_PER_MTOK: Type.Number({ default: 0.15, minimum: 0 }),
  AI_OUTPUT_PRICE_PER_MTOK: Type.Number({ default: 0.6, minimum: 0 }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  SMTP_FROM: Type.String({ default: 'Incident Platform <no-reply@localhost>', minLength: 3 }),
  APP_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  PUBLIC_PLATFORM_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  PUBLIC_PRODUCT_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  NOTIFY_RETRY_LIMIT: Type.Integer({ default: 5, minimum: 0, maximum: 20 }),
  NOTIFY_RETRY_DELAY_SECONDS: Type.Integer({ default: 60, minimum: 1 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
})

export type Environment = Static<typeof EnvironmentSchema>
