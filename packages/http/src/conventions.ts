import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import sensible from '@fastify/sensible'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { registerErrorHandling } from './error-handler.js'
import { ErrorResponse } from './schemas.js'

export interface HttpConventionsOptions {
  title: string
  description: string
  version?: string
  rateLimit: { max: number; timeWindow: string }
}

/**
 * The HTTP conventions of ARCHITECTURE.md for one service: error shape, security headers,
 * rate limits, and the OpenAPI document generated from the route schemas.
 */
async function httpConventions(app: FastifyInstance, options: HttpConventionsOptions): Promise<void> {
  registerErrorHandling(app)
  app.addSchema(ErrorResponse)
  await app.register(sensible)
  await app.register(helmet, {
    // The reference at /docs sets its own policy for its static files (staticCSP below).
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-site' },
  })
  await app.register(rateLimit, {
    global: true,
    max: options.rateLimit.max,
    timeWindow: options.rateLimit.timeWindow,
  })

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
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  })
  // The reference and its static files are public; swagger-ui takes no route config, so mark them here.
  app.addHook('onRoute', (route) => {
    if (route.url === '/docs' || route.url.startsWith('/docs/')) route.config = { ...route.config, public: true }
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { deepLinking: true, persistAuthorization: false },
  })
  app.get(
    '/api/v1/openapi.json',
    { schema: { hide: true }, config: { public: true } },
    async () => app.swagger(),
  )

  // Document the error body on every route that does not describe its own errors.
  app.addHook('onRoute', (route) => {
    if (!route.schema || route.schema.hide) return
    const response = (route.schema.response ?? {}) as Record<string, unknown>
    if (!Object.keys(response).some((status) => status.startsWith('4'))) {
      route.schema.response = { ...response, '4xx': { $ref: 'ErrorResponse#' }, '5xx': { $ref: 'ErrorResponse#' } }
    }
  })
}

export default fp(httpConventions, { name: 'http-conventions', fastify: '5.x' })
