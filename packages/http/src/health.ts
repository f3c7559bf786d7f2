import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'

const HealthResponse = Type.Object({ status: Type.Literal('ok'), service: Type.String() })
const CheckResult = Type.Union([Type.Literal('ok'), Type.Literal('unavailable')])
const ReadinessResponse = Type.Object({
  status: CheckResult,
  checks: Type.Object({ database: CheckResult, jobQueue: CheckResult }),
})

export interface HealthOptions {
  service: string
  /** Adds /health/live and /health/ready; each check rejects when its part is down. */
  probes?: { checkDatabase: () => Promise<void>; checkJobQueue: () => Promise<void> }
}

type Check = 'ok' | 'unavailable'

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
        summary: 'Readiness probe: the database answers and the job queue runs',
        response: { 200: ReadinessResponse, 503: ReadinessResponse },
      },
      config: probeConfig,
    },
    async (request, reply) => {
      const [database, jobQueue] = await Promise.allSettled([probes.checkDatabase(), probes.checkJobQueue()])
      const checks = { database: outcome(database), jobQueue: outcome(jobQueue) }
      if (checks.database === 'ok' && checks.jobQueue === 'ok') return { status: 'ok' as const, checks }
      const reasons = [database, jobQueue].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
      request.log.warn({ checks, err: reasons[0] }, 'readiness check failed')
      return reply.code(503).send({ status: 'unavailable' as const, checks })
    },
  )
}

function outcome(result: PromiseSettledResult<void>): Check {
  return result.status === 'fulfilled' ? 'ok' : 'unavailable'
}
