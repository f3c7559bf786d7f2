// For its augmentation (`request.user`), kept in the emitted declarations so a package
// compiled on its own sees it.
import '@fastify/jwt'
export { default as authPlugin, type AuthPluginOptions } from './plugin.js'
export { cookieRoutes } from './cookie-routes.js'
export { createSessionCache, type SessionCache } from './session-cache.js'
export { hashSecret } from './secret-hash.js'
export { generateApiToken, productRolesOf, type ApiTokenPrincipal } from './api-tokens.js'
export { SCIM_BASE_PATH, SCIM_TOKEN_PREFIX, generateScimToken, hashScimToken, type ScimPrincipal } from './scim-tokens.js'
export { createSigningKeyResolver, type SigningKeyResolver } from './signing-keys.js'
export {
  AuthenticatedUserSchema,
  PLATFORM_ADMINS_GROUP,
  platformRoles,
  type Account,
  type AuthenticatedUser,
  type IdTokenClaims,
  type PlatformRole,
} from './identity.js'
export {
  organizationRoles,
  productRoles,
  products,
  productRoleAtLeast,
  type OrganizationRole,
  type Product,
  type ProductRole,
} from './roles.js'
export { findMembership, findProductRole, productRoleOfUser, type HeldProductRoles, type Membership } from './membership.js'
export { accountOf, hasPlatformRole, mayReadProduct, membershipOf } from './access-rules.js'
export { isUuid } from './uuid.js'
export { ID_TOKEN_COOKIE, REFRESH_TOKEN_COOKIE, bearerToken, cookiesOf } from './token-extraction.js'
export { entitledTo } from './entitlements.js'
export { createActivityRecorder, type Activity, type ActivityKind, type ActivityRecorder } from './activity.js'
export { lastActiveInOrganization, listUserActivities, maintainUserActivities, USER_ACTIVITIES } from './activity-queries.js'
