import type { FastifyInstance } from 'fastify'
import { platformRoleRoutes } from './admin/platform-role-routes.js'
import { auditLogRoutes } from './audit/routes.js'
import { usersRoutes } from './identity/users-routes.js'
import { memberRoutes } from './members/routes.js'
import { organizationRoutes } from './organizations/routes.js'
import { subscriptionRoutes } from './organizations/subscription-routes.js'
import { scimTokenRoutes } from './scim-tokens/routes.js'

/** The platform surface: identity, organizations and members, audit log, platform roles, SCIM tokens. */
export async function platformSurface(app: FastifyInstance): Promise<void> {
  await app.register(usersRoutes)
  await app.register(organizationRoutes)
  await app.register(memberRoutes)
  await app.register(subscriptionRoutes)
  await app.register(auditLogRoutes)
  await app.register(platformRoleRoutes)
  await app.register(scimTokenRoutes)
}
