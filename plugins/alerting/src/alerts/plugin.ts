import type { FastifyPluginAsync } from 'fastify'
import { alertRoutes, type AlertRouteOptions } from './routes.js'

/** The alerts module's sub-plugin: alerts, their events and the moves people make on them. */
export const alertsModule: FastifyPluginAsync<AlertRouteOptions> = async (app, options) => {
  await app.register(alertRoutes, options)
}
