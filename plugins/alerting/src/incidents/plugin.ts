import type { FastifyPluginAsync } from 'fastify'
import type { SecretSealer } from '@svc/config'
import type { TrackerClient } from '../destinations/index.js'
import { checklistRoutes } from './checklists/routes.js'
import { followUpRoutes } from './follow-ups/routes.js'
import { createFollowUpSync } from './follow-ups/sync.js'
import { trackerEventRoutes } from './follow-ups/tracker-events-routes.js'
import { commandRoomRoutes, type LatestAnalysisReader } from './alert-command-room-routes.js'
import { incidentCommandRoomRoutes } from './command-room-routes.js'
import { correlationRoutes } from './correlation/routes.js'
import { incidentSettingsRoutes } from './settings-routes.js'
import { STATUS_INCIDENT_OPENED_QUEUE, startCorrelatingStatusIncidents } from './correlation/status-pages.js'
import { incidentLinkRoutes, type LinkRouteOptions } from './links-routes.js'
import { regroupRoutes } from './regroup-routes.js'
import { relatedRoutes } from './related-routes.js'
import { incidentRoutes } from './routes.js'
import { incidentFieldRoutes } from './shaping/field-routes.js'
import { incidentTypeRoutes } from './shaping/type-routes.js'
import { incidentSeverityRoutes } from './shaping/severity-routes.js'

export interface IncidentsModuleOptions extends LinkRouteOptions {
  /** The insights surface's read of an alert's latest analysis, for command rooms. */
  latestAnalysis: LatestAnalysisReader
  /** Opens trackers' credentials and webhook secrets. */
  sealer: SecretSealer
  /** Creates follow-ups' tickets. */
  trackers: TrackerClient
  productUrl: string
}

/**
 * The incidents module's sub-plugin: incidents and their command rooms, correlation, regrouping,
 * related incidents and links, and the worker that joins a status-page incident to its incident.
 */
export const incidentsModule: FastifyPluginAsync<IncidentsModuleOptions> = async (app, options) => {
  app.addHook('onReady', () => startCorrelatingStatusIncidents(app.database, app.jobs))
  app.addHook('onClose', () => app.jobs.offWork(STATUS_INCIDENT_OPENED_QUEUE))
  const followUpSync = createFollowUpSync({
    database: app.database,
    jobs: app.jobs,
    log: app.log.child({ component: 'follow-ups' }),
    trackers: options.trackers,
    sealer: options.sealer,
    productUrl: options.productUrl,
  })
  app.addHook('onReady', () => followUpSync.start())
  app.addHook('onClose', () => followUpSync.stop())
  await app.register(commandRoomRoutes, { latestAnalysis: options.latestAnalysis })
  await app.register(incidentRoutes)
  await app.register(regroupRoutes)
  await app.register(incidentCommandRoomRoutes, { latestAnalysis: options.latestAnalysis })
  await app.register(relatedRoutes)
  await app.register(incidentLinkRoutes, { statusIncidents: options.statusIncidents, rcas: options.rcas, hasAnalysis: options.hasAnalysis })
  await app.register(correlationRoutes)
  await app.register(incidentSettingsRoutes)
  await app.register(incidentFieldRoutes)
  await app.register(incidentTypeRoutes)
  await app.register(incidentSeverityRoutes)
  await app.register(followUpRoutes)
  await app.register(checklistRoutes)
  await app.register(trackerEventRoutes, { sealer: options.sealer })
}
