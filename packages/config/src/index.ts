export type { AuthConfig, CookieConfig, RateLimitConfig, ServiceConfig } from './config.js'
export type { LevelWithSilent } from './log-level.js'
export { EnvironmentSchema, type Environment } from './schema.js'
export {
  ConfigurationError,
  authConfigFor,
  authConfigFromEnvironment,
  readEnvironment,
  serviceConfigFor,
  standaloneServiceConfig,
  splitList,
} from './load.js'
