import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import { isProduct, isProductRole, productRoleAtLeast, type OrganizationRole, type Product, type ProductRole } from './roles.js'

export interface Membership {
  organizationId: string
  organizationName: string
  organizationSlug: string
  memberId: string
  role: OrganizationRole
}

export async function findMembership(db: Kysely<DB>, organizationId: string, userId: string): Promise<Membership | undefined> {
  const row = await db
    .selectFrom('core.organizationMembers as m')
    .innerJoin('core.organizations as o', 'o.id', 'm.organizationId')
    .select(['o.id as organizationId', 'o.name as organizationName', 'o.slug as organizationSlug', 'm.id as memberId', 'm.role'])
    .where('m.organizationId', '=', organizationId)
    .where('m.userId', '=', userId)
    // A member the identity provider deactivated (SCIM active=false) is no member until reactivated.
    .where('m.suspendedAt', 'is', null)
    // An invited member is no member until the invitation is accepted (decision 0023).
    .where('m.joinedAt', 'is not', null)
    .executeTakeFirst()
  return row && { ...row, role: row.role as OrganizationRole }
}

/** A Map: products come from rows and requests, and a plain object would answer `constructor`. */
export type HeldProductRoles = ReadonlyMap<Product, ProductRole>

/**
 * The member's product roles, each the highest of the role granted to them directly and the
 * roles their SCIM groups grant (a group bound to `{"alerting": "responder"}` gives each of its
 * members at least that); with `product`, that product's only.
 */
export async function heldProductRoles(
  db: Kysely<DB>,
  organizationId: string,
  memberId: string,
  product?: Product,
): Promise<HeldProductRoles> {
  let direct = db
    .selectFrom('core.orgProductRoles')
    .select(['product', 'role'])
    .where('organizationId', '=', organizationId)
    .where('memberId', '=', memberId)
  let viaGroups = db
    .selectFrom('core.scimGroupMembers as gm')
    .innerJoin('core.scimGroups as g', 'g.id', 'gm.groupId')
    .innerJoin(sql<{ key: string; value: string }>`jsonb_each_text(g.product_roles)`.as('granted'), (join) => join.onTrue())
    .select(['granted.key as product', 'granted.value as role'])
    .where('gm.organizationId', '=', organizationId)
    .where('gm.memberId', '=', memberId)
  if (product) {
    direct = direct.where('product', '=', product)
    viaGroups = viaGroups.where('granted.key', '=', product)
  }
  const held = new Map<Product, ProductRole>()
  for (const grant of await direct.unionAll(viaGroups).execute()) {
    if (!isProduct(grant.product) || !isProductRole(grant.role)) continue
    const current = held.get(grant.product)
    if (current === undefined || productRoleAtLeast(grant.role, current)) held.set(grant.product, grant.role)
  }
  return held
}

/** The member's role for one product, or undefined (see heldProductRoles). */
export async function findProductRole(
  db: Kysely<DB>,
  organizationId: string,
  memberId: string,
  product: Product,
): Promise<ProductRole | undefined> {
  return (await heldProductRoles(db, organizationId, memberId, product)).get(product)
}

/**
 * The role a user holds in a product of an organization, for callers that are not the user's
 * own request (a chat button pressed by them): owners hold every product as admin, suspended
 * members and non-members hold nothing.
 */
export async function productRoleOfUser(
  db: Kysely<DB>,
  organizationId: string,
  userId: string,
  product: Product,
): Promise<ProductRole | undefined> {
  const membership = await findMembership(db, organizationId, userId)
  if (!membership) return undefined
  if (membership.role === 'owner') return 'admin'
  return findProductRole(db, organizationId, membership.memberId, product)
}
