import type { FastifyPluginAsync } from 'fastify'
import type { OutboundConfig } from '@svc/config'
import type { Notifier } from '@svc/notifier'
import { audienceRoutes } from './audiences/routes.js'
import { brandingRoutes } from './branding/routes.js'
import { CHECK_FOLLOW_QUEUE, startFollowingChecks } from './components/follow-checks.js'
import { componentRoutes } from './components/routes.js'
import { ALERT_FOLLOW_QUEUE, startFollowingAlerts } from './incidents/alert-follow.js'
import { INCIDENT_FOLLOW_QUEUE, startFollowingIncidents } from './incidents/incident-follow.js'
import { incidentRoutes } from './incidents/routes.js'
import { createMaintenanceScheduler } from './maintenances/scheduler.js'
import type { MonitoringQuieter } from './maintenances/quiet.js'
import { maintenanceRoutes } from './maintenances/routes.js'
import { createDomainChecker, createDomainMaintenance } from './pages/custom-domains.js'
import { pageRoutes } from './pages/routes.js'
import { createPublicCache } from './public/cache.js'
import { accessRoutes } from './private/routes.js'
import { publicRoutes } from './public/routes.js'
import { createSubscriberNotifications } from './subscribers/notifications.js'
import { subscriberRoutes } from './subscribers/routes.js'
import { templateRoutes } from './templates/routes.js'

export interface StatusPagesOptions {
  /** The service's outbound messages: subscriber e-mail and webhooks. */
  notifier: Notifier
  /** The product API's public base URL: public pages and links in messages. */
  productUrl: string
  /** Subscriber webhook targets follow the rule of every user-given address. */
  outbound: OutboundConfig
  /** DNS_SERVERS: the resolvers custom domains are verified with; unset: the system's. */
  dnsServers?: string[]
  /** How a maintenance quiets the alerts and checks of its components (alerting, synthetics); unset: it quiets nothing. */
  quieter?: MonitoringQuieter
}

/**
 * The status page surface of the product API (issue 15), its own encapsulated plugin: pages,
 * components, incidents, scheduled maintenance and subscribers under
 * `/api/v1/statuspages/organizations/:orgId/...`, and the public pages (Statuspage API v2 JSON,
 * HTML, feeds, badge) under `/api/v1/statuspages/public/:slug/` and at custom domains.
 */
export const statusPagesSurface: FastifyPluginAsync<StatusPagesOptions> = async (app, options) => {
  const cache = createPublicCache(app.database.db)
  const changed = (pageId: string) => cache.forget(pageId)
  const notifications = createSubscriberNotifications({
    database: app.database,
    jobs: app.jobs,
    notifier: options.notifier,
    productUrl: options.productUrl,
    log: app.log.child({ component: 'statuspage-notifications' }),
  })
  const scheduler = createMaintenanceScheduler({
    database: app.database,
    jobs: app.jobs,
    notifications,
    changed,
    log: app.log.child({ component: 'maintenance-scheduler' }),
    ...(options.quieter ? { quieter: options.quieter } : {}),
  })
  const checkDomain = createDomainChecker(options.dnsServers)
  const domains = createDomainMaintenance({
    database: app.database,
    jobs: app.jobs,
    check: checkDomain,
    changed,
    log: app.log.child({ component: 'custom-domains' }),
  })
  app.addHook('onReady', async () => {
    await notifications.start()
    await domains.start()
    await scheduler.start()
    await startFollowingAlerts({
      database: app.database,
      jobs: app.jobs,
      notifications,
      changed,
      log: app.log.child({ component: 'statuspage-alerts' }),
    })
    await startFollowingIncidents({
      database: app.database,
      jobs: app.jobs,
      notifications,
      changed,
      log: app.log.child({ component: 'statuspage-incidents' }),
    })
    await startFollowingChecks({ database: app.database, jobs: app.jobs, changed, log: app.log.child({ component: 'statuspage-checks' }) })
  })
  app.addHook('onClose', async () => {
    await app.jobs.offWork(ALERT_FOLLOW_QUEUE)
    await app.jobs.offWork(INCIDENT_FOLLOW_QUEUE)
    await app.jobs.offWork(CHECK_FOLLOW_QUEUE)
    await scheduler.stop()
    await domains.stop()
    await notifications.stop()
  })

  await app.register(pageRoutes, { productUrl: options.productUrl, changed, checkDomain })
  await app.register(brandingRoutes, { productUrl: options.productUrl, changed })
  await app.register(audienceRoutes, { productUrl: options.productUrl, changed })
  await app.register(componentRoutes, { changed })
  await app.register(templateRoutes)
  await app.register(incidentRoutes, { notifications, changed })
  await app.register(maintenanceRoutes, { notifications, scheduler, changed, ...(options.quieter ? { quieter: options.quieter } : {}) })
  await app.register(subscriberRoutes, { notifier: options.notifier, outbound: options.outbound, productUrl: options.productUrl })
  await app.register(publicRoutes, { cache, notifier: options.notifier, outbound: options.outbound, productUrl: options.productUrl })
  await app.register(accessRoutes, { cache, notifier: options.notifier, productUrl: options.productUrl })
}

export type { MonitoringQuieter, QuietRequest } from './maintenances/quiet.js'
export {
  componentHistoryAround,
  componentsOfServices,
  componentUptimeBetween,
  incidentTemplatesFor,
  maintenanceWindowsOf,
  unknownStatusComponents,
  searchStatusIncidents,
  statusIncident,
  statusIncidentSummaries,
  statusIncidentTimeline,
  statusIncidentsAbout,
  statusPagesOf,
  subscriberWebhookTargets,
} from './reads.js'
export { endSmsSubscriptions } from './queries/subscribers.js'
