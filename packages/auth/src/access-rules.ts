import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { platformRoles, type Account } from './identity.js'
import { keptAnswers, type Database } from '@svc/db'
import { ForbiddenError, NotFoundError, PlanRequiredError } from '@svc/http'
import { entitledTo } from './entitlements.js'
import { productRoleAtLeast, type OrganizationRole, type Product, type ProductRole } from './roles.js'
import { findMembership, heldProductRoles, type HeldProductRoles, type Membership } from './membership.js'
import { isUuid } from './uuid.js'
import { tokenProductRoles } from './api-tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization of `:orgId` and the caller's membership, once the member rule passed. */
    membership: Membership | null
    /** The caller's product roles in `:orgId`, direct and through SCIM groups; read once per request. */
    heldProductRoles(): Promise<HeldProductRoles>
  }
  interface FastifyInstance {
    requireOrgMember: onRequestAsyncHookHandler
    requireOrgRole(...roles: OrganizationRole[]): onRequestAsyncHookHandler
    requireProductRole(product: Product, minimum: ProductRole): onRequestAsyncHookHandler
    /** One of the organization roles, or at least `minimum` in any one product. */
    requireOrgRoleOrAnyProductRole(roles: OrganizationRole[], minimum: ProductRole): onRequestAsyncHookHandler
    requirePlatformAdmin: onRequestAsyncHookHandler
  }
}

const platformRoleNames = new Set<string>(platformRoles)

/** A platform role (GLOBAL_ADMIN, ADMIN) holds every product role in every organization. */
export function hasPlatformRole(request: FastifyRequest): boolean {
  return platformRoleNames.has(request.account?.platformRole ?? '')
}

/**
 * Whether the caller may read `product`'s records on that surface: what the product-role rule
 * with `viewer` would let through (owner, platform role, or at least viewer there). For the
 * places that show another surface's records (an RCA's incidents), where a rule cannot decide.
 */
export async function mayReadProduct(request: FastifyRequest, product: Product): Promise<boolean> {
  const membership = membershipOf(request)
  if (membership.role === 'owner' || hasPlatformRole(request)) return true
  return productRoleAtLeast((await request.heldProductRoles()).get(product), 'viewer')
}

function organizationIdOf(request: FastifyRequest): string | undefined {
  return (request.params as { orgId?: string } | undefined)?.orgId
}

/**
 * The declarative access rules (ARCHITECTURE.md, "Identity and access"). Routes name them
 * in `onRequest`; handlers never re-check. The gates (gates.ts) put the member rule before
 * them on any route under `/organizations/:orgId`, whether or not it declares a stronger one.
 * Answers the member rule for the gates.
 */
/** Requests that change records: what a lapsed plan refuses. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * What the rules read per request, kept until the database announces a change to an
 * organization's memberships, product roles or groups (decision 0029), and never longer than a
 * cached session keeps its account (session-cache.ts).
 */
const ACCESS_KEPT = { max: 10_000, ttlMs: 30_000 }

/**
 * `enforcePlans`: billing is on, so a product role rule also refuses writes to a product the
 * organization's plan does not hold (402 PLAN_REQUIRED), reads stay open and nothing is deleted.
 */
export function registerAccessRules(app: FastifyInstance, database: Database, enforcePlans = false): onRequestAsyncHookHandler {
  const { db } = database
  app.decorateRequest('membership', null)
  const memberships = keptAnswers<{ membership: Membership | undefined }>(database.changes, 'access', ACCESS_KEPT)
  const productRoles = keptAnswers<HeldProductRoles>(database.changes, 'access', ACCESS_KEPT)

  async function loadMembership(request: FastifyRequest): Promise<Membership> {
    if (request.membership) return request.membership
    const organizationId = organizationIdOf(request)
    const user = request.user
    // Not a member and no such organization look the same: existence is never leaked.
    const { membership } =
      isUuid(organizationId) && user
        ? await memberships.get(organizationId, user.userId, async () => {
            // Shared by every request of the member while kept.
            const found = await findMembership(database, organizationId, user.userId)
            return { membership: found && Object.freeze(found) }
          })
        : { membership: undefined }
    if (!membership) throw new NotFoundError('organization')
    if (request.apiToken) {
      // A token is a member of its organization, whatever its creator is (decision 0030).
      creatorMemberships.set(request, membership)
      request.membership = { ...membership, role: 'member' }
    } else request.membership = membership
    return request.membership
  }

  /** The creator's own membership behind an API token's request, for capping what the token holds. */
  const creatorMemberships = new WeakMap<FastifyRequest, Membership>()
  const heldByRequest = new WeakMap<FastifyRequest, Promise<HeldProductRoles>>()
  app.decorateRequest('heldProductRoles', function heldProductRolesOfRequest(this: FastifyRequest) {
    let held = heldByRequest.get(this)
    if (!held) {
      const { organizationId, memberId } = membershipOf(this)
      held = productRoles.get(organizationId, memberId, () => heldProductRoles(db, organizationId, memberId))
      const token = this.apiToken
      const creator = creatorMemberships.get(this)
      if (token && creator) held = held.then((creatorHeld) => tokenProductRoles(token.productRoles, creator, creatorHeld))
      heldByRequest.set(this, held)
    }
    return held
  })

  const requireOrgMember: onRequestAsyncHookHandler = async function requireOrgMember(request) {
    await loadMembership(request)
  }

  app.decorate('requireOrgMember', requireOrgMember)

  app.decorate('requireOrgRole', function requireOrgRole(...roles: OrganizationRole[]): onRequestAsyncHookHandler {
    return async function orgRoleRule(request) {
      const membership = await loadMembership(request)
      if (!roles.includes(membership.role)) {
        throw new ForbiddenError(`this needs the organization role ${roles.join(' or ')}`)
      }
    }
  })

  app.decorate('requireProductRole', function requireProductRole(product: Product, minimum: ProductRole): onRequestAsyncHookHandler {
    return async function productRoleRule(request) {
      const membership = await loadMembership(request)
      if (enforcePlans && WRITES.has(request.method) && !(await entitledTo(db, membership.organizationId, product)))
        throw new PlanRequiredError(`the organization's plan does not include ${product}: it is read-only until a plan is active`)
      if (membership.role === 'owner') return
      if (hasPlatformRole(request)) return
      const held = (await request.heldProductRoles()).get(product)
      if (!productRoleAtLeast(held, minimum)) {
        throw new ForbiddenError(`this needs the ${product} role ${minimum} or higher`)
      }
    }
  })

  app.decorate(
    'requireOrgRoleOrAnyProductRole',
    function requireOrgRoleOrAnyProductRole(roles: OrganizationRole[], minimum: ProductRole): onRequestAsyncHookHandler {
      return async function orgRoleOrAnyProductRoleRule(request) {
        const membership = await loadMembership(request)
        if (roles.includes(membership.role)) return
        if (hasPlatformRole(request)) return
        const held = await request.heldProductRoles()
        if ([...held.values()].some((role) => productRoleAtLeast(role, minimum))) return
        throw new ForbiddenError(`this needs the organization role ${roles.join(' or ')}, or the role ${minimum} in a product`)
      }
    },
  )

  app.decorate('requirePlatformAdmin', async function requirePlatformAdmin(request: FastifyRequest) {
    if (!request.user?.isPlatformAdmin) throw new ForbiddenError('this needs a platform admin')
  })

  return requireOrgMember
}

/**
 * The organization and membership the member rule resolved. Every route under
 * `/organizations/:orgId` has that rule, so reaching a handler without it is a wiring bug.
 */
export function membershipOf(request: FastifyRequest): Membership {
  if (!request.membership) throw new Error(`${request.method} ${request.url}: the organization member rule did not run`)
  return request.membership
}

/** The acting account of an authenticated request (the JWT rule resolves it). */
export function accountOf(request: FastifyRequest): Account {
  if (!request.account) throw new Error(`${request.method} ${request.url}: the JWT rule did not run`)
  return request.account
}
