export {
  DEFAULT_AI_CONFIG,
  DEFAULT_INGEST_RATE_LIMIT,
  DEFAULT_NOTIFIER_CONFIG,
  DEFAULT_SYNTHETICS_CONFIG,
  type SyntheticsConfig,
  type AiConfig,
  type BillingConfig,
  type NotifierConfig,
  type TwilioConfig,
  type WebPushConfig,
  type OutboundConfig,
  type AuthConfig,
  type CookieConfig,
  type RateLimitConfig,
  type ServiceConfig,
  type TrustProxy,
} from './config.js'
export type { LevelWithSilent } from './log-level.js'
export { EnvironmentSchema, type Environment } from './schema.js'
export {
  ConfigurationError,
  aiConfigFor,
  billingConfigFor,
  notifierConfigFor,
  authConfigFor,
  authConfigFromEnvironment,
  readEnvironment,
  serviceConfigFor,
  syntheticsConfigFor,
  standaloneServiceConfig,
  splitList,
  trustProxyOf,
} from './load.js'
