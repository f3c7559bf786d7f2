import type { FastifyInstance } from 'fastify'
import {
  DEFAULT_INVITATION_TTL_DAYS,
  DEFAULT_INGEST_RATE_LIMIT,
  DEFAULT_NOTIFIER_CONFIG,
  DEFAULT_PHONE_VERIFICATION_CONFIG,
  DEFAULT_RETENTION_CONFIG,
  secretSealer,
  type ServiceConfig,
} from '@svc/config'
import { createNotifier, pruneOutbox } from '@svc/notifier'
import { alertingSurface, escalationPolicyExists, pruneAlertingHistory, quietForMaintenance } from '@svc/plugin-alerting'
import {
  alertAnalysisStarter,
  insightsSurface,
  latestAnalysesOf,
  hasAnalysis,
  latestAnalysisOf,
  pruneAnalysisEvents,
  openRcaForIncident,
  rcasAbout,
} from '@svc/plugin-insights'
import {
  contactMethodRoutes,
  hasVerifiedPhone,
  inviteRoutes,
  notificationPreferencesOf,
  pushSubscriptionsOf,
  productUserRoutes,
  removePushSubscriptions,
  subscriptionRoutes,
  verifiedAddressesOf,
} from '@svc/plugin-product-users'
import {
  componentsOfServices,
  endSmsSubscriptions,
  maintenanceWindowsOf,
  statusIncidentsAbout,
  statusPagesSurface,
  subscriberWebhookTargets,
  unknownStatusComponents,
} from '@svc/plugin-statuspages'
import { checksFollowedBy, checksOfServices, syntheticsSurface } from '@svc/plugin-synthetics'
import { billingOf } from '@svc/billing'
import { profileRoutes } from '@svc/profile'
import { buildServiceApp, createDailyMaintenance, type Resources } from '@svc/runtime'

/**
 * The product API (port 3003): status pages, alerting, synthetics and AI insights. Each
 * surface is its own encapsulated plugin registered here as its issue lands; what one surface
 * reads of another's tables comes through that surface's read module, wired in here.
 */
export function buildApp(config: ServiceConfig, shared?: Resources): Promise<FastifyInstance> {
  return buildServiceApp(
    config,
    {
      name: 'product',
      title: 'Product API',
      description: 'Status pages, alerting, synthetic checks and AI incident insights.',
      probes: true,
      async surfaces(app) {
        // Outbound messages: written to the outbox by the surfaces, delivered by this replica's worker.
        const notifier = createNotifier({
          jobs: app.jobs,
          database: app.database,
          config: config.notifier ?? DEFAULT_NOTIFIER_CONFIG,
          log: app.log.child({ component: 'notifier' }),
          webhooks: { resolve: subscriberWebhookTargets(app.database.db), policy: config.outbound ?? { allowPrivateTargets: false } },
          removePushSubscriptions: (endpoints) => removePushSubscriptions(app.database.db, endpoints),
        })
        const productUrl = config.productLinkBase ?? config.publicUrls?.product ?? 'http://localhost:3003'
        app.addHook('onReady', () => notifier.start())
        app.addHook('onClose', () => notifier.stop())
        await app.register(alertingSurface, {
          ingestLimits: { perConfig: config.rateLimit.ingestPerConfig ?? DEFAULT_INGEST_RATE_LIMIT, perAddress: config.rateLimit.max },
          latestAnalysis: latestAnalysisOf,
          latestAnalyses: latestAnalysesOf,
          statusIncidents: statusIncidentsAbout,
          rcas: rcasAbout,
          hasAnalysis,
          startAnalysis: alertAnalysisStarter(app.database, app.jobs, config.ai),
          openRca: openRcaForIncident,
          preferences: notificationPreferencesOf,
          contacts: { verifiedAddressesOf, hasVerifiedPhone },
          // STOP to our number ends the number's status page subscriptions.
          smsOptOut: endSmsSubscriptions,
          pushSubscriptions: pushSubscriptionsOf,
          serviceShowings: { components: componentsOfServices, checks: checksOfServices },
          notifier,
          outbound: config.outbound ?? { allowPrivateTargets: false },
          sealer: secretSealer(config.synthetics?.secretsKey),
          productUrl,
          enforcePlans: config.billing !== undefined,
        })
        await app.register(statusPagesSurface, {
          notifier,
          productUrl,
          // A maintenance silences its components' services and checks for its window.
          quieter: {
            silence: (db, request) => quietForMaintenance(db, app.jobs, request),
            checksFollowing: checksFollowedBy,
          },
          outbound: config.outbound ?? { allowPrivateTargets: false },
          ...(config.dnsServers ? { dnsServers: config.dnsServers } : {}),
        })
        await app.register(syntheticsSurface, {
          config: config.synthetics,
          outbound: config.outbound ?? { allowPrivateTargets: false },
          productUrl,
          unknownComponents: unknownStatusComponents,
          policyExists: escalationPolicyExists,
          maintenanceWindows: maintenanceWindowsOf,
        })
        await app.register(insightsSurface, { ai: config.ai, productUrl })
        // The product surfaces' growing history, pruned daily in short batches (decision 0022).
        const retention = config.retention ?? DEFAULT_RETENTION_CONFIG
        const productRetention = createDailyMaintenance({
          queue: 'product.retention',
          cron: '37 3 * * *',
          jobs: app.jobs,
          log: app.log.child({ component: 'retention' }),
          run: async (now) => ({
            ...(await pruneAlertingHistory(app.database.db, retention, now)),
            ...(await pruneAnalysisEvents(app.database.db, retention.analysisEvents, now)),
            ...(await pruneOutbox(app.database.db, retention.outbox, now)),
          }),
        })
        app.addHook('onReady', () => productRetention.start())
        await app.register(profileRoutes)
        await app.register(productUserRoutes)
        await app.register(subscriptionRoutes, { billing: await billingOf(config.billing) })
        await app.register(inviteRoutes, { notifier, ttlDays: config.invitationTtlDays ?? DEFAULT_INVITATION_TTL_DAYS })
        await app.register(contactMethodRoutes, {
          notifier,
          outbound: config.outbound ?? { allowPrivateTargets: false },
          phoneVerification: config.phoneVerification ?? DEFAULT_PHONE_VERIFICATION_CONFIG,
        })
      },
    },
    shared,
  )
}
