// Side-effect imports for their type augmentations (the `security` and `hide` schema keys),
// kept in the emitted declarations so a package compiled on its own sees them.
import '@fastify/swagger'
import './context-config.js'
import './service-decorations.js'

export { API_REFERENCE_PREFIX, apiReferencePlugin, default as httpConventions, type HttpConventionsOptions } from './conventions.js'
export { PUBLIC_CORS_HEADERS, publicCors, type CorsSettings } from './cors.js'
export { healthRoutes, type HealthOptions } from './health.js'
export { apiTags, operationIdOf } from './openapi-names.js'
export type { RouteLimit, SharedCounters } from './rate-limits.js'
export { redactedUrl, registerErrorHandling, toErrorBody } from './error-handler.js'
export * from './errors.js'
export * from './schemas.js'
export { sendSerialized, serializedAnswer } from './serialized.js'
export { ExpiringLinkQuery, expiringLinkHolds, signExpiringLink } from './expiring-links.js'
