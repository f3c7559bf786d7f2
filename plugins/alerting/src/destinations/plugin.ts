import type { SecretSealer } from '@svc/config'
import type { FastifyPluginAsync } from 'fastify'
import { chatIntegrationRoutes, type ChatRouteOptions } from './chat-integrations/routes.js'
import { outboundWebhookRoutes } from './outbound-webhooks/routes.js'
import { trackerRoutes } from './trackers/routes.js'

export interface DestinationsModuleOptions extends ChatRouteOptions {
  /** Seals trackers' credentials (the secrets key). */
  sealer: SecretSealer
}

/** The destinations module's sub-plugin: the chat integrations and outbound webhooks pages go to, and the trackers follow-ups go to. */
export const destinationsModule: FastifyPluginAsync<DestinationsModuleOptions> = async (app, options) => {
  await app.register(outboundWebhookRoutes, { outbound: options.outbound })
  await app.register(chatIntegrationRoutes, options)
  await app.register(trackerRoutes, { outbound: options.outbound, sealer: options.sealer, productUrl: options.productUrl })
}
