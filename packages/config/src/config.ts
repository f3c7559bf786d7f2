import type { LevelWithSilent } from './log-level.js'

export interface AuthConfig {
  /** Expected `iss` of every ID token. */
  issuer: string
  /** Where the issuer's signing keys are published. */
  jwksUrl: string
  /** Accepted `aud` values (the app client ids). */
  clientIds: string[]
  /** Client secret for the refresh exchange, sent with HTTP Basic when set. */
  clientSecret?: string
  /** OAuth2 token endpoint used by POST /auth/refresh. */
  tokenUrl: string
  /** Claim that holds the identity provider's groups. */
  groupsClaim: string
  /** OAuth2 revocation endpoint (RFC 7009, Cognito's /oauth2/revoke): logout revokes the refresh token there. */
  revokeUrl?: string
}

export interface CookieConfig {
  /** Shared parent domain, so sibling subdomains receive the cookies; undefined means host-only. */
  domain?: string
  /** Browser origins allowed to make cookie-authenticated state-changing requests. */
  allowedOrigins: string[]
}

export interface RateLimitConfig {
  /** Requests per client address per window. */
  max: number
  timeWindow: string
  /** Ingested deliveries per webhook config per minute, unless the config sets its own. */
  ingestPerConfig?: number
}

/** INGEST_RATE_LIMIT_MAX's default: an alert storm from one Alertmanager is not a browser. */
export const DEFAULT_INGEST_RATE_LIMIT = 6000

/**
 * Fastify's `trustProxy` forms: `true` (every hop), a hop count (the client address is that
 * many entries from the right of X-Forwarded-For, so entries a client wrote itself are never
 * taken), or the addresses and CIDRs of the trusted proxies.
 */
export type TrustProxy = boolean | number | string[]

/** The AI provider and how analyses are retried and priced. */
export interface AiConfig {
  /** The OpenAI-compatible model server; undefined: the built-in offline analyzer. */
  openai?: { apiKey: string; baseUrl?: string; model: string; timeoutMs: number; maxOutputTokens?: number }
  /** Retries of a failed analysis job, `retryDelaySeconds` apart, doubling each time. */
  retryLimit: number
  retryDelaySeconds: number
  /** US dollars per million tokens, for the usage budget's cost estimate. */
  pricePerMillionTokens: { input: number; output: number }
  /** The monthly caps of an organization that set none of its own (AI_DEFAULT_MONTHLY_TOKENS, AI_DEFAULT_MONTHLY_COST_USD). */
  defaultMonthlyLimits: { tokens: number; costUsd: number }
  /**
   * AI_MONTHLY_CEILING_USD: what the whole installation may spend on models in a calendar month
   * (UTC), all organizations together; no call is made past it. Unset: only each organization's limits.
   */
  monthlyCeilingUsd?: number
  /** How far one investigation may go (AI_INVESTIGATION_*); unset: DEFAULT_INVESTIGATION_BOUNDS. */
  investigation?: InvestigationBounds
}

/** The bounds of one investigation with a model (rounds, tokens over all of them, wall time), and how long a re-investigation waits for more change. */
export interface InvestigationBounds {
  maxSteps: number
  maxTokens: number
  timeoutMs: number
  reinvestigateDebounceSeconds: number
}

export const DEFAULT_INVESTIGATION_BOUNDS: InvestigationBounds = {
  maxSteps: 8,
  maxTokens: 40_000,
  timeoutMs: 120_000,
  reinvestigateDebounceSeconds: 60,
}

export const DEFAULT_AI_CONFIG: AiConfig = {
  retryLimit: 3,
  retryDelaySeconds: 30,
  pricePerMillionTokens: { input: 0.15, output: 0.6 },
  defaultMonthlyLimits: { tokens: 2_000_000, costUsd: 20 },
  investigation: DEFAULT_INVESTIGATION_BOUNDS,
}

/** Outbound messages: the providers, the sender, and how deliveries are retried. */
export interface NotifierConfig {
  /** The SMTP server (nodemailer connection URL); undefined: e-mails are held in the outbox. */
  smtpUrl?: string
  /** The From of every e-mail. */
  from: string
  /** The web application's address, for links in messages; undefined: messages carry no link. */
  appUrl?: string
  /** Retries of a delivery that failed for a reason that may pass, `retryDelaySeconds` apart, doubling. */
  retryLimit: number
  retryDelaySeconds: number
  /** SMS and voice through Twilio's REST API; undefined: those messages are held in the outbox. */
  twilio?: TwilioConfig
  /** Web push (RFC 8030) with VAPID (RFC 8292); undefined: push messages are held in the outbox. */
  webPush?: WebPushConfig
  /**
   * CATCH_MESSAGES: e-mail, SMS, voice and push messages that no provider is configured for are
   * captured on this machine (a line on the console, status `captured`) instead of held: what
   * `pnpm start` does unless told otherwise, so a newcomer sees what would have been sent.
   */
  catchMessages?: boolean
  /** Where a person reads what the catcher took (the development outbox page), for its console lines. */
  capturedAt?: string
}

/** VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT (generate the keys with `npx web-push generate-vapid-keys`). */
export interface WebPushConfig {
  /** The application server key browsers subscribe with (URL-safe base64, 65 bytes decoded). */
  publicKey: string
  privateKey: string
  /** Who push services contact about this sender: a `mailto:` or `https:` URL. */
  subject: string
  /** Push services on loopback, private or link-local addresses are allowed (ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets: boolean
  /** Certificate authorities (PEM) trusted for push services besides the system's: tests, private gateways. */
  extraCa?: string[]
}

/** TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM, TWILIO_API_URL. */
export interface TwilioConfig {
  accountSid: string
  authToken: string
  /** The number (E.164) messages and calls come from. */
  from: string
  /** A Twilio-compatible server instead of https://api.twilio.com (tests, gateways). */
  apiUrl?: string
  /** Where Twilio calls back (status, voice prompts, replies): the product API's public base URL. */
  callbackBase: string
}

export const DEFAULT_NOTIFIER_CONFIG: NotifierConfig = {
  from: 'Incident Platform <no-reply@localhost>',
  retryLimit: 5,
  retryDelaySeconds: 60,
}

/** Everything a service needs to build itself; tests construct it directly. */
/**
 * How long a client may take (issue 51): its headers within `headersMs`, its whole request, body
 * included, within `requestMs`. A connection that sends its headers a byte at a time (slowloris)
 * or its body a trickle at a time is closed, instead of holding a socket and memory for as long as
 * it likes.
 */
export interface HttpTimeouts {
  headersMs: number
  requestMs: number
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000 }

export interface ServiceConfig {
  /** PostgreSQL URL, or undefined for the embedded PGlite database under `dataDir`. */
  databaseUrl?: string
  /** Connections per process on PostgreSQL (DATABASE_POOL_MAX); unset: 10. */
  databasePoolMax?: number
  /**
   * A direct connection for the change listener (DATABASE_LISTEN_URL), when `databaseUrl` goes
   * through a pooler in transaction mode, where LISTEN does not hold (decision 0029).
   */
  databaseListenUrl?: string
  dataDir: string
  /**
   * Redis (REDIS_URL): when set, rate-limit counters and session-cache invalidations are
   * shared by every replica; unset, they stay in process.
   */
  redisUrl?: string
  /** METRICS_PORT: Prometheus metrics are served there, and requests timed; unset: off. */
  metricsPort?: number
  host: string
  /** Behind a load balancer: which X-Forwarded-For entries to believe. */
  trustProxy: TrustProxy
  auth: AuthConfig
  cookies: CookieConfig
  rateLimit: RateLimitConfig
  /** How long a client may take to send a request; unset: DEFAULT_HTTP_TIMEOUTS. */
  httpTimeouts?: HttpTimeouts
  /** The services' public base URLs (PUBLIC_PLATFORM_URL, PUBLIC_PRODUCT_URL); unset: from each request. */
  publicUrls?: { platform?: string; product?: string }
  /**
   * Where messages sent from jobs (no request to take a host from) link to the product API:
   * PUBLIC_PRODUCT_URL, else http://localhost:PRODUCT_PORT (right on one machine; set the URL elsewhere).
   */
  productLinkBase?: string
  logLevel: LevelWithSilent
  /**
   * LOG_FORMAT: `pretty`, one coloured line a person reads, or `json`, a line a collector reads.
   * Unset: pretty on a terminal outside production, else JSON.
   */
  logFormat?: 'json' | 'pretty'
  /** Where log lines go; unset: standard output. Tests read the logs through it. */
  logDestination?: { write(line: string): void }
  /** Unset: offline analyzer with the default retries and prices. */
  ai?: AiConfig
  /** Unset: e-mails held in the outbox, the default sender and retries. */
  notifier?: NotifierConfig
  /** Unset: public targets only, Slack's own API. */
  outbound?: OutboundConfig
  /** Unset (no STRIPE_SECRET_KEY): billing is off and every organization has every product. */
  billing?: BillingConfig
  /** Unset: DEFAULT_SYNTHETICS_CONFIG (region `local`, 30 days of raw results, no secrets key). */
  synthetics?: SyntheticsConfig
  /** REPORTS_SIGNING_KEY: signs report download links (HMAC-SHA256); every platform replica shares it. Unset: downloads answer 503. */
  reportsSigningKey?: string
  /** REPORTS_RETENTION_DAYS: reports older than this are deleted with their files. Unset: kept until deleted. */
  reportsRetentionDays?: number
  /** DNS_SERVERS: resolvers (`ip` or `ip:port`) for custom domain verification; unset: the system's. */
  dnsServers?: string[]
  /** ORGANIZATIONS_PER_USER: organizations one person may have created (platform admins excepted); unset: 10. */
  organizationsPerUser?: number
  /** Unset: DEFAULT_PHONE_VERIFICATION_CONFIG. */
  phoneVerification?: PhoneVerificationConfig
  /** Unset: DEFAULT_RETENTION_CONFIG. */
  retention?: RetentionConfig
  /** INVITATION_TTL_DAYS: how long an invitation's link works (and again from each resend); unset: DEFAULT_INVITATION_TTL_DAYS. */
  invitationTtlDays?: number
}

export const DEFAULT_INVITATION_TTL_DAYS = 7

/** How long each kind of growing data is kept, in days (docs/decisions/0022). */
export interface RetentionConfig {
  /** ANALYTICS_RETENTION_DAYS: raw analytics events, dropped by the month. */
  analyticsEvents: number
  /** ANALYTICS_SUMMARY_RETENTION_DAYS: the daily usage counts summaries read. */
  analyticsSummaries: number
  /** USER_ACTIVITY_RETENTION_DAYS: sign-ins, refreshes, impersonation and API use, dropped by the month. */
  userActivities: number
  /** ALERT_EVENT_RETENTION_DAYS: the timeline events of alerts resolved longer ago than this; the alerts stay. */
  alertEvents: number
  /** NOTIFICATION_RETENTION_DAYS: notification attempts (who was paged, how, what happened). */
  notificationAttempts: number
  /** WEBHOOK_DELIVERY_RETENTION_DAYS: ingestion delivery records (retries answered) and finished outbound webhook deliveries. */
  webhookDeliveries: number
  /** OUTBOX_RETENTION_DAYS: sent and failed outbox messages; held ones stay. */
  outbox: number
  /** ANALYSIS_EVENT_RETENTION_DAYS: analyses' events (steps, retries); the analyses and their findings stay. */
  analysisEvents: number
}

export const DEFAULT_RETENTION_CONFIG: RetentionConfig = {
  analyticsEvents: 180,
  analyticsSummaries: 730,
  userActivities: 90,
  alertEvents: 400,
  notificationAttempts: 400,
  webhookDeliveries: 30,
  outbox: 30,
  analysisEvents: 180,
}

/**
 * What a person may cost us in verification codes to phone numbers (SMS and voice), so nobody
 * can pump premium traffic through our Twilio account (docs/decisions/0012, "Phone numbers").
 */
export interface PhoneVerificationConfig {
  /** PHONE_CODES_PER_HOUR: codes sent to phone numbers per person in any hour. */
  codesPerHour: number
  /** PHONE_CODES_TOTAL: codes sent to phone numbers per person, ever. */
  codesTotal: number
  /** PHONE_CODE_ATTEMPTS: wrong codes tried on one number, over all its codes; then no more codes go to it. */
  attemptsPerMethod: number
  /** PHONE_COUNTRIES: the countries (ISO 3166-1 alpha-2) numbers may be in; unset: any. */
  countries?: string[]
}

export const DEFAULT_PHONE_VERIFICATION_CONFIG: PhoneVerificationConfig = { codesPerHour: 5, codesTotal: 30, attemptsPerMethod: 15 }

/** Billing through Stripe (issue 17). */
export interface BillingConfig {
  /** STRIPE_SECRET_KEY */
  secretKey: string
  /** STRIPE_WEBHOOK_SECRET: verifies `POST /api/v1/billing/webhook`; unset, the webhook answers 503. */
  webhookSecret?: string
  /** STRIPE_API_URL: a Stripe-compatible server instead of https://api.stripe.com (tests). */
  apiUrl?: string
  /** BILLING_SUCCESS_URL, BILLING_CANCEL_URL: where checkout returns to. */
  successUrl: string
  cancelUrl: string
}

/** Synthetic checks (issue 16). */
export interface SyntheticsConfig {
  /** SYNTHETICS_REGION: the region this service runs checks in itself. */
  region: string
  /** SYNTHETICS_RETENTION_DAYS: raw results are kept this long; roll-ups stay. */
  retentionDays: number
  /** SYNTHETICS_CONCURRENCY: checks this replica runs at once. */
  concurrency: number
  /** SYNTHETICS_SECRETS_KEY: 32 bytes, base64; seals check secrets. Unset: secrets cannot be stored. */
  secretsKey?: string
  /** SYNTHETICS_CHROMIUM_PATH: the Chromium browser checks run in; default Debian's `/usr/bin/chromium`. Absent: this region runs none. */
  chromiumPath?: string
  /** SYNTHETICS_BROWSER_CONCURRENCY: browser checks this replica runs at once (each is a Chromium); default 2. */
  browserConcurrency?: number
  /** SYNTHETICS_BROWSER_RUNS_PER_MONTH: the browser runs an organization's checks may be scheduled for in 30 days; default 50,000. */
  browserRunsPerMonth?: number
}

export const DEFAULT_SYNTHETICS_CONFIG: SyntheticsConfig = { region: 'local', retentionDays: 30, concurrency: 50 }

/** Requests to addresses users give (chat webhooks, outbound webhooks) and to Slack's Web API. */
export interface OutboundConfig {
  /** ALLOW_PRIVATE_TARGETS: loopback, private and link-local targets are allowed (tests, on-premises). */
  allowPrivateTargets: boolean
  /** SLACK_API_URL: a Slack-compatible Web API instead of https://slack.com/api/ (tests, gateways). */
  slackApiUrl?: string
}
