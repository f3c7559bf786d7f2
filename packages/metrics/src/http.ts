import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { httpRequestDuration } from './registry.js'

/**
 * Times every request of one service by its route template (never the raw URL: one series
 * per route, not per id). Requests no route matched share one series.
 */
async function requestMetrics(app: FastifyInstance, options: { service: string }): Promise<void> {
  app.addHook('onResponse', async (request, reply) => {
    httpRequestDuration.observe(
      {
        service: options.service,
        method: request.method,
        route: request.routeOptions.url ?? '(unmatched)',
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    )
  })
}

export const requestMetricsPlugin = fp(requestMetrics, { name: 'request-metrics', fastify: '5.x' })
