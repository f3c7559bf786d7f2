import { envSchema } from 'env-schema'
import { EnvironmentSchema, type Environment } from './schema.js'
import { isIP } from 'node:net'
import type { AiConfig, AuthConfig, BillingConfig, NotifierConfig, ServiceConfig, SyntheticsConfig, TrustProxy } from './config.js'

export class ConfigurationError extends Error {
  override name = 'ConfigurationError'
}

/** Reads and validates the environment; a bad value throws one ConfigurationError naming it. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  // Empty strings count as unset, so `FOO=` in a .env file does not fail a format check.
  const data = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''))
  try {
    return envSchema<Environment>({ schema: EnvironmentSchema, data, env: false, dotenv: false })
  } catch (error) {
    throw new ConfigurationError(`invalid configuration: ${(error as Error).message}`)
  }
}

export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0)
}

// proxy-addr's names for address ranges, which Fastify accepts in a list.
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function isAddressOrCidr(entry: string): boolean {
  if (RANGE_NAMES.has(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  const version = isIP(address)
  if (version === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  const bits = Number(prefix)
  return /^\d+$/.test(prefix) && bits <= (version === 4 ? 32 : 128)
}

/** TRUST_PROXY: `true`, `false`, a hop count, or a comma-separated list of addresses and CIDRs. */
export function trustProxyOf(value: string): TrustProxy {
  const text = value.trim().toLowerCase()
  if (text === 'true') return true
  if (text === 'false') return false
  if (/^\d+$/.test(text)) return Number(text)
  const entries = splitList(text)
  const bad = entries.find((entry) => !isAddressOrCidr(entry))
  if (entries.length === 0 || bad !== undefined) {
    throw new ConfigurationError(
      `invalid configuration: TRUST_PROXY must be true, false, a hop count or addresses/CIDRs (${bad ?? value} is none)`,
    )
  }
  return entries
}

/** The auth settings for an external issuer; throws when the issuer or client id is missing. */
export function authConfigFromEnvironment(env: Environment): AuthConfig {
  if (!env.AUTH_ISSUER) throw new ConfigurationError('AUTH_ISSUER is required when a service runs on its own')
  const clientIds = splitList(env.AUTH_CLIENT_ID)
  if (clientIds.length === 0) throw new ConfigurationError('AUTH_CLIENT_ID is required when AUTH_ISSUER is set')
  return authConfigFor(env, env.AUTH_ISSUER, clientIds)
}

/** Fills the derived defaults of the table: JWKS and token endpoints under the issuer. */
export function authConfigFor(env: Environment, issuer: string, clientIds: string[]): AuthConfig {
  const base = issuer.replace(/(?<!\/)\/+$/, '')
  return {
    issuer,
    jwksUrl: env.AUTH_JWKS_URL ?? `${base}/.well-known/jwks.json`,
    clientIds,
    clientSecret: env.AUTH_CLIENT_SECRET,
    tokenUrl: env.AUTH_TOKEN_URL ?? `${base}/oauth2/token`,
    groupsClaim: env.AUTH_GROUPS_CLAIM,
    revokeUrl: env.AUTH_REVOKE_URL,
  }
}

export function serviceConfigFor(env: Environment, auth: AuthConfig): ServiceConfig {
  return {
    databaseUrl: env.DATABASE_URL,
    databasePoolMax: env.DATABASE_POOL_MAX,
    databaseListenUrl: env.DATABASE_LISTEN_URL,
    dataDir: env.DATA_DIR,
    redisUrl: env.REDIS_URL,
    metricsPort: env.METRICS_PORT,
    host: env.HOST,
    trustProxy: trustProxyOf(env.TRUST_PROXY),
    auth,
    cookies: { domain: env.COOKIE_DOMAIN, allowedOrigins: splitList(env.ALLOWED_ORIGINS) },
    rateLimit: { max: env.RATE_LIMIT_MAX, timeWindow: env.RATE_LIMIT_WINDOW, ingestPerConfig: env.INGEST_RATE_LIMIT_MAX },
    publicUrls: {
      platform: env.PUBLIC_PLATFORM_URL?.replace(/(?<!\/)\/+$/, ''),
      product: env.PUBLIC_PRODUCT_URL?.replace(/(?<!\/)\/+$/, ''),
    },
    productLinkBase: env.PUBLIC_PRODUCT_URL?.replace(/(?<!\/)\/+$/, '') ?? `http://localhost:${env.PRODUCT_PORT}`,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT ?? (process.stdout.isTTY && process.env.NODE_ENV !== 'production' ? 'pretty' : 'json'),
    ai: aiConfigFor(env),
    notifier: notifierConfigFor(env),
    outbound: { allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS, slackApiUrl: env.SLACK_API_URL?.replace(/(?<!\/)\/*$/, '/') },
    synthetics: syntheticsConfigFor(env),
    organizationsPerUser: env.ORGANIZATIONS_PER_USER,
    ...(env.DNS_SERVERS ? { dnsServers: splitList(env.DNS_SERVERS) } : {}),
    phoneVerification: {
      codesPerHour: env.PHONE_CODES_PER_HOUR,
      codesTotal: env.PHONE_CODES_TOTAL,
      attemptsPerMethod: env.PHONE_CODE_ATTEMPTS,
      ...(env.PHONE_COUNTRIES ? { countries: splitList(env.PHONE_COUNTRIES).map((country) => country.toUpperCase()) } : {}),
    },
    reportsSigningKey: env.REPORTS_SIGNING_KEY,
    retention: {
      analyticsEvents: env.ANALYTICS_RETENTION_DAYS,
      analyticsSummaries: env.ANALYTICS_SUMMARY_RETENTION_DAYS,
      userActivities: env.USER_ACTIVITY_RETENTION_DAYS,
      alertEvents: env.ALERT_EVENT_RETENTION_DAYS,
      notificationAttempts: env.NOTIFICATION_RETENTION_DAYS,
      webhookDeliveries: env.WEBHOOK_DELIVERY_RETENTION_DAYS,
      outbox: env.OUTBOX_RETENTION_DAYS,
      analysisEvents: env.ANALYSIS_EVENT_RETENTION_DAYS,
    },
    invitationTtlDays: env.INVITATION_TTL_DAYS,
    ...(env.REPORTS_RETENTION_DAYS ? { reportsRetentionDays: env.REPORTS_RETENTION_DAYS } : {}),
    ...(env.STRIPE_SECRET_KEY ? { billing: billingConfigFor(env, env.STRIPE_SECRET_KEY) } : {}),
  }
}

/** Checkout returns to the web application (APP_URL) unless told otherwise. */
export function billingConfigFor(env: Environment, secretKey: string): BillingConfig {
  const app = env.APP_URL?.replace(/(?<!\/)\/+$/, '') ?? `http://localhost:${env.PLATFORM_PORT}`
  return {
    secretKey,
    webhookSecret: env.STRIPE_WEBHOOK_SECRET,
    apiUrl: env.STRIPE_API_URL,
    successUrl: env.BILLING_SUCCESS_URL ?? `${app}/billing/success`,
    cancelUrl: env.BILLING_CANCEL_URL ?? `${app}/billing/cancel`,
  }
}

export function syntheticsConfigFor(env: Environment): SyntheticsConfig {
  return {
    region: env.SYNTHETICS_REGION,
    retentionDays: env.SYNTHETICS_RETENTION_DAYS,
    concurrency: env.SYNTHETICS_CONCURRENCY,
    secretsKey: env.SYNTHETICS_SECRETS_KEY,
    chromiumPath: env.SYNTHETICS_CHROMIUM_PATH,
    browserConcurrency: env.SYNTHETICS_BROWSER_CONCURRENCY,
    browserRunsPerMonth: env.SYNTHETICS_BROWSER_RUNS_PER_MONTH,
  }
}

export function notifierConfigFor(env: Environment): NotifierConfig {
  const twilio = [env.TWILIO_ACCOUNT_SID, env.TWILIO_AUTH_TOKEN, env.TWILIO_FROM]
  if (twilio.some(Boolean) && !twilio.every(Boolean)) {
    throw new ConfigurationError('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together: set all three or none')
  }
  const vapid = [env.VAPID_PUBLIC_KEY, env.VAPID_PRIVATE_KEY, env.VAPID_SUBJECT]
  if (vapid.some(Boolean) && !vapid.every(Boolean)) {
    throw new ConfigurationError('VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT go together: set all three or none')
  }
  return {
    smtpUrl: env.SMTP_URL,
    from: env.SMTP_FROM,
    appUrl: env.APP_URL?.replace(/(?<!\/)\/+$/, ''),
    retryLimit: env.NOTIFY_RETRY_LIMIT,
    retryDelaySeconds: env.NOTIFY_RETRY_DELAY_SECONDS,
    ...(env.CATCH_MESSAGES ? { catchMessages: true } : {}),
    ...(env.TWILIO_ACCOUNT_SID && env.TWILIO_AUTH_TOKEN && env.TWILIO_FROM
      ? {
          twilio: {
            accountSid: env.TWILIO_ACCOUNT_SID,
            authToken: env.TWILIO_AUTH_TOKEN,
            from: env.TWILIO_FROM,
            apiUrl: env.TWILIO_API_URL?.replace(/(?<!\/)\/+$/, ''),
            callbackBase: env.PUBLIC_PRODUCT_URL?.replace(/(?<!\/)\/+$/, '') ?? `http://localhost:${env.PRODUCT_PORT}`,
          },
        }
      : {}),
    ...(env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY && env.VAPID_SUBJECT
      ? {
          webPush: {
            publicKey: env.VAPID_PUBLIC_KEY,
            privateKey: env.VAPID_PRIVATE_KEY,
            subject: env.VAPID_SUBJECT,
            allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS,
          },
        }
      : {}),
  }
}

export function aiConfigFor(env: Environment): AiConfig {
  return {
    openai: env.OPENAI_API_KEY
      ? {
          apiKey: env.OPENAI_API_KEY,
          baseUrl: env.OPENAI_BASE_URL,
          model: env.AI_MODEL,
          timeoutMs: env.AI_TIMEOUT_MS,
          maxOutputTokens: env.AI_MAX_OUTPUT_TOKENS,
        }
      : undefined,
    retryLimit: env.AI_RETRY_LIMIT,
    retryDelaySeconds: env.AI_RETRY_DELAY_SECONDS,
    pricePerMillionTokens: { input: env.AI_INPUT_PRICE_PER_MTOK, output: env.AI_OUTPUT_PRICE_PER_MTOK },
    defaultMonthlyLimits: { tokens: env.AI_DEFAULT_MONTHLY_TOKENS, costUsd: env.AI_DEFAULT_MONTHLY_COST_USD },
    ...(env.AI_MONTHLY_CEILING_USD !== undefined ? { monthlyCeilingUsd: env.AI_MONTHLY_CEILING_USD } : {}),
    investigation: {
      maxSteps: env.AI_INVESTIGATION_MAX_STEPS,
      maxTokens: env.AI_INVESTIGATION_MAX_TOKENS,
      timeoutMs: env.AI_INVESTIGATION_TIMEOUT_MS,
      reinvestigateDebounceSeconds: env.AI_REINVESTIGATE_DEBOUNCE_SECONDS,
    },
  }
}

/**
 * Configuration of one service running on its own (`pnpm start:platform`, `start:product`):
 * production and replicas, so it needs a shared PostgreSQL and a real identity provider.
 */
export function standaloneServiceConfig(env: Environment): ServiceConfig {
  if (!env.DATABASE_URL) {
    throw new ConfigurationError('DATABASE_URL is required when a service runs on its own (the embedded database is for `pnpm start`)')
  }
  return serviceConfigFor(env, authConfigFromEnvironment(env))
}
