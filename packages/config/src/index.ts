export { DEFAULT_AI_CONFIG, type AiConfig, type AuthConfig, type CookieConfig, type RateLimitConfig, type ServiceConfig } from './config.js'
export type { LevelWithSilent } from './log-level.js'
export { EnvironmentSchema, type Environment } from './schema.js'
export {
  ConfigurationError,
  aiConfigFor,
  authConfigFor,
  authConfigFromEnvironment,
  readEnvironment,
  serviceConfigFor,
  standaloneServiceConfig,
  splitList,
} from './load.js'
