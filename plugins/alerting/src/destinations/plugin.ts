import type { FastifyPluginAsync } from 'fastify'
import { chatIntegrationRoutes, type ChatRouteOptions } from './chat-integrations/routes.js'
import { outboundWebhookRoutes } from './outbound-webhooks/routes.js'

/** The destinations module's sub-plugin: the chat integrations and outbound webhooks pages go to. */
export const destinationsModule: FastifyPluginAsync<ChatRouteOptions> = async (app, options) => {
  await app.register(outboundWebhookRoutes, { outbound: options.outbound })
  await app.register(chatIntegrationRoutes, options)
}
