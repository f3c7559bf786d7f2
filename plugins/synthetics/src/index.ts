import type { FastifyPluginAsync } from 'fastify'
import { browserRuntime, DEFAULT_CHROMIUM_PATH } from '@svc/check-runner'
import { DEFAULT_SYNTHETICS_CONFIG, secretSealer, type SyntheticsConfig } from '@svc/config'
import type { OutboundPolicy } from '@svc/outbound'
import type { DefinitionContext } from './checks/definition.js'
import { checkRoutes } from './checks/routes.js'
import { heartbeatRoutes } from './heartbeats/routes.js'
import { relayApi } from './relays/api.js'
import { relayRoutes } from './relays/routes.js'
import { resultRoutes, type ResultRouteOptions } from './results/routes.js'
import { screenshotRoutes } from './results/screenshot-routes.js'
import { createScheduler } from './scheduling/scheduler.js'
import { secretRoutes } from './secrets/routes.js'

/** Unless configured (SYNTHETICS_BROWSER_CONCURRENCY, SYNTHETICS_BROWSER_RUNS_PER_MONTH): two Chromiums at once, as on two cores. */
const DEFAULT_BROWSER_CONCURRENCY = 2
const DEFAULT_BROWSER_RUNS_PER_MONTH = 50_000

export interface SyntheticsOptions {
  config?: SyntheticsConfig
  /** Check targets follow the rule of every user-given address. */
  outbound: OutboundPolicy
  /** The product API's public base URL: heartbeat URLs. */
  productUrl: string
  /** Reads of other surfaces, wired in by the service: status page components and windows, escalation policies. */
  unknownComponents: DefinitionContext['unknownComponents']
  policyExists: DefinitionContext['policyExists']
  maintenanceWindows: ResultRouteOptions['maintenanceWindows']
}

/**
 * The synthetics surface of the product API (issue 16), its own encapsulated plugin: checks,
 * secrets, relays and results under `/api/v1/synthetics/organizations/:orgId/...`, the relays'
 * own API under `/api/v1/synthetics/relay/`, and heartbeat push URLs.
 */
export const syntheticsSurface: FastifyPluginAsync<SyntheticsOptions> = async (app, options) => {
  const config = options.config ?? DEFAULT_SYNTHETICS_CONFIG
  const sealer = secretSealer(config.secretsKey)
  const browser = browserRuntime(config.chromiumPath ?? DEFAULT_CHROMIUM_PATH, config.browserConcurrency ?? DEFAULT_BROWSER_CONCURRENCY)
  const scheduler = createScheduler({
    browser,
    database: app.database,
    jobs: app.jobs,
    config,
    policy: options.outbound,
    sealer,
    log: app.log.child({ component: 'synthetics' }),
  })
  app.addHook('onReady', () => scheduler.start())
  app.addHook('onClose', () => scheduler.stop())

  await app.register(checkRoutes, {
    scheduler,
    sealer,
    serviceRegion: config.region,
    browser,
    browserRunsPerMonth: config.browserRunsPerMonth ?? DEFAULT_BROWSER_RUNS_PER_MONTH,
    policy: options.outbound,
    productUrl: options.productUrl,
    unknownComponents: options.unknownComponents,
    policyExists: options.policyExists,
  })
  await app.register(resultRoutes, {
    retentionDays: config.retentionDays,
    maintenanceWindows: options.maintenanceWindows,
    productUrl: options.productUrl,
  })
  await app.register(screenshotRoutes)
  await app.register(secretRoutes, { sealer })
  await app.register(relayRoutes, { serviceRegion: config.region })
  await app.register(relayApi, { scheduler, sealer })
  await app.register(heartbeatRoutes, { jobs: app.jobs, serviceRegion: config.region })
}

export { checkAvailabilityBetween, checkResultsAround, checksFollowedBy, checksOf, checksOfServices, recentCheckResults } from './reads.js'
export type { MaintenanceWindowsReader } from './results/availability.js'
export { MAINTENANCE_QUEUE, ROLLUP_QUEUE } from './scheduling/scheduler.js'
