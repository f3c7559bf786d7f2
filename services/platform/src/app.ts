import type { FastifyInstance } from 'fastify'
import { DEFAULT_NOTIFIER_CONFIG, DEFAULT_SYNTHETICS_CONFIG, type ServiceConfig } from '@svc/config'
// `app.database` and `app.jobs` as @svc/http declares them, for this package compiled on its own.
import type {} from '@svc/http'
import { createNotifier } from '@svc/notifier'
import { incidentReportBetween } from '@svc/plugin-alerting'
import { aiUsageBetween } from '@svc/plugin-insights'
import { platformSurface, scimRouterError, type ReportSources } from '@svc/plugin-platform'
import { componentUptimeBetween, maintenanceWindowsOf, statusPagesOf } from '@svc/plugin-statuspages'
import { checkAvailabilityBetween, checksOf } from '@svc/plugin-synthetics'
import { buildServiceApp, type Resources } from '@svc/runtime'

/** The platform API (port 3004): identity, organizations, billing, SSO/SCIM, audit, reports. */
export function buildApp(config: ServiceConfig, shared?: Resources): Promise<FastifyInstance> {
  return buildServiceApp(
    config,
    {
      name: 'platform',
      title: 'Platform API',
      description: 'Identity, organizations, members and roles, billing, SSO/SCIM provisioning, audit logs and reports.',
      probes: true,
      async surfaces(app) {
        const productUrl = config.productLinkBase ?? config.publicUrls?.product ?? 'http://localhost:3003'
        // Queues only: the product API's notifier worker delivers what is queued here (it holds
        // every channel's provider, status page webhooks included), on the shared database.
        const notifier = createNotifier({
          jobs: app.jobs,
          database: app.database,
          config: config.notifier ?? DEFAULT_NOTIFIER_CONFIG,
          log: app.log.child({ component: 'notifier' }),
        })
        const retentionDays = (config.synthetics ?? DEFAULT_SYNTHETICS_CONFIG).retentionDays
        const reportSources: ReportSources = {
          incidents: incidentReportBetween,
          componentUptime: componentUptimeBetween,
          checkAvailability: (db, organizationId, from, to) =>
            checkAvailabilityBetween(db, organizationId, from, to, { retentionDays, maintenanceWindows: maintenanceWindowsOf }),
          aiUsage: aiUsageBetween,
        }
        await app.register(platformSurface, {
          notifier,
          appUrl: config.notifier?.appUrl,
          statusPages: (db, organizationId, page) => statusPagesOf(db, organizationId, page, productUrl),
          checks: checksOf,
          billing: config.billing,
          reportSources,
          reportsSigningKey: config.reportsSigningKey,
          reportsRetentionDays: config.reportsRetentionDays,
          analyticsRetentionDays: config.retention?.analyticsEvents,
          organizationsPerUser: config.organizationsPerUser,
          invitationTtlDays: config.invitationTtlDays,
        })
      },
      lenientPaths: true,
      routerError: scimRouterError,
    },
    shared,
  )
}
