import type { FastifyPluginAsync } from 'fastify'
import { workflowRoutes } from './routes.js'

/** The workflows module's sub-plugin: workflows and their runs. The runner is made by the root. */
export const workflowsModule: FastifyPluginAsync = async (app) => {
  await app.register(workflowRoutes)
}
