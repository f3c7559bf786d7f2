import type { FastifyInstance } from 'fastify'
import type { IngestLimits } from './ingestion/limits.js'
import { commandRoomRoutes } from './alerts/command-room.js'
import { alertRoutes } from './alerts/routes.js'
import { deployEventRoutes } from './deploys/routes.js'
import { ingestionRoutes } from './ingestion/routes.js'
import { webhookConfigRoutes } from './webhooks/routes.js'

/** The alerting surface of the product API: webhook configurations, ingestion, alerts and deploy events (issue 5, in part). */
export async function alertingSurface(app: FastifyInstance, options: { ingestLimits: IngestLimits }): Promise<void> {
  await app.register(webhookConfigRoutes)
  await app.register(ingestionRoutes, options)
  await app.register(alertRoutes)
  await app.register(commandRoomRoutes)
  await app.register(deployEventRoutes)
}
