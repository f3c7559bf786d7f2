import type { FastifyInstance } from 'fastify'
import { webhookConfigRoutes } from './webhooks/routes.js'

/** The alerting surface of the product API: webhook configurations so far (issue 5). */
export async function alertingSurface(app: FastifyInstance): Promise<void> {
  await app.register(webhookConfigRoutes)
}
