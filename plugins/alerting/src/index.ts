import type { FastifyPluginAsync } from 'fastify'
import type { IngestLimits } from './ingestion/limits.js'
import { commandRoomRoutes, type LatestAnalysisReader } from './alerts/command-room.js'
import { alertRoutes } from './alerts/routes.js'
import { deployEventRoutes } from './deploys/routes.js'
import { scheduleRoutes } from './schedules/routes.js'
import { teamRoutes } from './teams/routes.js'
import { ingestionRoutes } from './ingestion/routes.js'
import { webhookConfigRoutes } from './webhooks/routes.js'

export interface AlertingOptions {
  ingestLimits: IngestLimits
  /** The insights surface's read of an alert's latest analysis, for command rooms. */
  latestAnalysis: LatestAnalysisReader
}

/**
 * The alerting surface of the product API, registered as its own encapsulated plugin: webhook
 * configurations, ingestion, alerts, command rooms, deploy events, on-call teams and schedules.
 */
export const alertingSurface: FastifyPluginAsync<AlertingOptions> = async (app, options) => {
  await app.register(webhookConfigRoutes)
  await app.register(ingestionRoutes, { ingestLimits: options.ingestLimits })
  await app.register(alertRoutes)
  await app.register(commandRoomRoutes, { latestAnalysis: options.latestAnalysis })
  await app.register(deployEventRoutes)
  await app.register(teamRoutes)
  await app.register(scheduleRoutes)
}

export {
  alertIncident,
  alertSummaries,
  alertTimeline,
  deploysBetween,
  searchAlerts,
  similarResolvedAlerts,
  type AlertSummary,
} from './reads.js'
