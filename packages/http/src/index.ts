import './context-config.js'

export { API_REFERENCE_PREFIX, apiReferencePlugin, default as httpConventions, type HttpConventionsOptions } from './conventions.js'
export { healthRoutes, type HealthOptions } from './health.js'
export type { RouteLimit } from './rate-limits.js'
export { redactedUrl, registerErrorHandling, toErrorBody } from './error-handler.js'
export * from './errors.js'
export * from './schemas.js'
