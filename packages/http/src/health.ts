import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'

const HealthResponse = Type.Object({ status: Type.Literal('ok'), service: Type.String() })
const ReadinessResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({ database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) }),
})

export interface HealthOptions {
  service: string
  /** Adds /health/live and /health/ready; `checkDatabase` rejects when the database is down. */
  probes?: { checkDatabase: () => Promise<void> }
}

// Probes are public and exempt from rate limits: a load balancer polls them from one address.
const probeConfig = { public: true, limit: false } as const

export async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get(
    '/api/v1/health',
    { schema: { tags: ['health'], summary: 'Load balancer health check', response: { 200: HealthResponse } }, config: probeConfig },
    async () => ({ status: 'ok' as const, service: options.service }),
  )
  const probes = options.probes
  if (!probes) return

  app.get(
    '/api/v1/health/live',
    {
      schema: { tags: ['health'], summary: 'Liveness probe: the process answers', response: { 200: HealthResponse } },
      config: probeConfig,
    },
    async () => ({ status: 'ok' as const, service: options.service }),
  )
  app.get(
    '/api/v1/health/ready',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness probe: the database answers',
        response: { 200: ReadinessResponse, 503: ReadinessResponse },
      },
      config: probeConfig,
    },
    async (request, reply) => {
      try {
        await probes.checkDatabase()
        return { status: 'ok' as const, checks: { database: 'ok' as const } }
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed: database unavailable')
        return reply.code(503).send({ status: 'unavailable' as const, checks: { database: 'unavailable' as const } })
      }
    },
  )
}
