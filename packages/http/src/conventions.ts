import sensible from '@fastify/sensible'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { registerCors, type CorsSettings } from './cors.js'
import { registerErrorHandling } from './error-handler.js'
import { registerRateLimits, type RateLimitSettings, type SharedCounters } from './rate-limits.js'
import { registerSecurityHeaders } from './security-headers.js'
import { apiTags, operationIdOf } from './openapi-names.js'
import { ErrorResponse } from './schemas.js'

/** What the document transform reads and fixes of an operation. */
interface DocumentedOperation {
  tags?: string[]
  parameters?: Array<{ in?: string; required?: boolean; schema?: { default?: unknown } }>
  requestBody?: { content?: Record<string, { schema?: unknown }> }
}

/**
 * A request body's properties that have a default are not required of a client (the schema fills
 * them in), wherever they sit in the body: a schedule layer's `restriction`, say. TypeBox lists a
 * property as required unless it is `Optional`, which would also make it optional in the
 * answers, where it is always present. Answers keep the schema as it is.
 */
function withDefaultsOptional(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return
  const node = schema as { properties?: Record<string, { default?: unknown }>; required?: string[] } & Record<string, unknown>
  if (node.properties && node.required) {
    node.required = node.required.filter((name) => node.properties?.[name]?.default === undefined)
    if (node.required.length === 0) delete node.required
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach(withDefaultsOptional)
    else withDefaultsOptional(value)
  }
}

export interface HttpConventionsOptions {
  title: string
  description: string
  version?: string
  rateLimit: RateLimitSettings
  /** REDIS_URL set: rate-limit counters shared by every replica. */
  sharedCounters?: SharedCounters
  cors: CorsSettings
  /** Where the API is served (the public URL settings), for the document's `servers`; unset, the document's own host. */
  publicUrl?: string
}

/**
 * The HTTP conventions of ARCHITECTURE.md for one service: error shape, security headers,
 * rate limits, and the OpenAPI document generated from the route schemas.
 */
async function httpConventions(app: FastifyInstance, options: HttpConventionsOptions): Promise<void> {
  registerErrorHandling(app)
  app.addSchema(ErrorResponse)
  await app.register(sensible)
  registerSecurityHeaders(app, {
    // An API answer loads nothing and is framed by no one (OWASP REST Security Cheat Sheet):
    // helmet's default directives are for HTML pages and would add 270 bytes to every answer.
    // The reference at /docs and the status page HTML set their own policies.
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-site' },
    // Headers for browsers long gone (IE8 downloads, Flash, legacy XSS auditors) and for
    // HTML pages: an API answering JSON gains nothing from them but bytes on every response.
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
    originAgentCluster: false,
  })
  await registerRateLimits(app, options.rateLimit, options.sharedCounters)
  await registerCors(app, options.cors)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, description: options.description, version: options.version ?? '1.0.0' },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An ID token of the identity provider' },
          cookieAuth: { type: 'apiKey', in: 'cookie', name: 'svc_id_token', description: 'Set by POST /auth/set-cookie' },
        },
      },
      security: [{ cookieAuth: [] }, { bearerAuth: [] }],
      ...(options.publicUrl ? { servers: [{ url: options.publicUrl, description: options.title }] } : {}),
    },
    // The tags operations use, declared with what they group, in the order of `apiTags`.
    transformObject: (document) => {
      // This service writes OpenAPI (`openapi` above), never Swagger 2.
      const { openapiObject } = document as Extract<typeof document, { openapiObject: unknown }>
      const used = new Set<string>()
      for (const path of Object.values(openapiObject.paths ?? {}))
        for (const operation of Object.values(path ?? {}) as Array<DocumentedOperation>) {
          for (const tag of operation?.tags ?? []) used.add(tag)
          // A query parameter with a default may be left out (the schema fills it in), so it is not
          // required: generated clients would otherwise demand `page` and `limit` on every list.
          for (const parameter of operation?.parameters ?? [])
            if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false
          if (operation?.requestBody) {
            // A copy: the body's schema objects may be shared with an answer's.
            operation.requestBody = structuredClone(operation.requestBody)
            withDefaultsOptional(operation.requestBody)
          }
        }
      const known = Object.keys(apiTags)
      const order = (tag: string) => (known.includes(tag) ? known.indexOf(tag) : known.length)
      const tags = [...used].sort((a, b) => order(a) - order(b) || a.localeCompare(b))
      return { ...openapiObject, tags: tags.map((name) => ({ name, ...(apiTags[name] ? { description: apiTags[name] } : {}) })) }
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  })
  // Name every operation, and document the error body on every route that does not describe its own errors.
  app.addHook('onRoute', (route) => {
    if (!route.schema || route.schema.hide) return
    const method = Array.isArray(route.method) ? route.method[0] : route.method
    route.schema.operationId ??= operationIdOf(String(method), route.url)
    const response = (route.schema.response ?? {}) as Record<string, unknown>
    if (!Object.keys(response).some((status) => status.startsWith('4'))) {
      route.schema.response = { ...response, '4xx': { $ref: 'ErrorResponse#' }, '5xx': { $ref: 'ErrorResponse#' } }
    }
  })
}

export default fp(httpConventions, { name: 'http-conventions', fastify: '5.x' })

/**
 * The OpenAPI document at /api/v1/openapi.json and the interactive reference at /docs.
 * swagger-ui takes no route config, so its routes are public by their prefix: the auth
 * plugin is told `publicPrefixes: [API_REFERENCE_PREFIX]`.
 */
export const API_REFERENCE_PREFIX = '/docs'

async function apiReference(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: API_REFERENCE_PREFIX,
    staticCSP: true,
    uiConfig: { deepLinking: true, persistAuthorization: false },
  })
  app.get('/api/v1/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger())
}

export const apiReferencePlugin = fp(apiReference, { name: 'api-reference', fastify: '5.x', dependencies: ['http-conventions'] })
