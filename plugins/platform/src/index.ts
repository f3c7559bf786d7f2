import type { FastifyInstance } from 'fastify'
import { usersRoutes } from './identity/users-routes.js'

/** The platform surface: identity for now; organizations, billing, SCIM and audit join it. */
export async function platformSurface(app: FastifyInstance): Promise<void> {
  await app.register(usersRoutes)
}
