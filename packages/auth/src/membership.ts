import { sql, type Kysely } from 'kysely'
import type { Database, DB } from '@svc/db'
import { isProduct, isProductRole, productRoleAtLeast, type OrganizationRole, type Product, type ProductRole } from './roles.js'

export interface Membership {
  organizationId: string
  organizationName: string
  organizationSlug: string
  memberId: string
  role: OrganizationRole
}

/**
 * The membership lookup behind every organization-scoped request (the member rule), written as
 * one constant statement and run prepared: PostgreSQL plans it once per connection, the embedded
 * database parses it once, and no query builder runs per request. Building it with Kysely and
 * planning it each time cost more than running it (decision 0002, "parsed once").
 */
const MEMBERSHIP = `
  select o.id as organization_id, o.name as organization_name, o.slug as organization_slug, m.id as member_id, m.role
  from core.organization_members m
  join core.organizations o on o.id = m.organization_id
  where m.organization_id = $1 and m.user_id = $2
    -- A member the identity provider deactivated (SCIM active=false) is no member until reactivated.
    and m.suspended_at is null
    -- An invited member is no member until the invitation is accepted (decision 0023).
    and m.joined_at is not null`

type MembershipRow = Record<'organization_id' | 'organization_name' | 'organization_slug' | 'member_id' | 'role', string>

export async function findMembership(
  database: Pick<Database, 'prepared'>,
  organizationId: string,
  userId: string,
): Promise<Membership | undefined> {
  const [row] = await database.prepared<MembershipRow>(MEMBERSHIP, [organizationId, userId])
  return (
    row && {
      organizationId: row.organization_id,
      organizationName: row.organization_name,
      organizationSlug: row.organization_slug,
      memberId: row.member_id,
      role: row.role as OrganizationRole,
    }
  )
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
  database: Database,
  organizationId: string,
  userId: string,
  product: Product,
): Promise<ProductRole | undefined> {
  const membership = await findMembership(database, organizationId, userId)
  if (!membership) return undefined
  if (membership.role === 'owner') return 'admin'
  return findProductRole(database.db, organizationId, membership.memberId, product)
}
