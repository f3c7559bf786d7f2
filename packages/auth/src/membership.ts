import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import { productRoles, type OrganizationRole, type Product, type ProductRole } from './roles.js'

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
    .select([
      'o.id as organizationId',
      'o.name as organizationName',
      'o.slug as organizationSlug',
      'm.id as memberId',
      'm.role',
    ])
    .where('m.organizationId', '=', organizationId)
    .where('m.userId', '=', userId)
    // A member the identity provider deactivated (SCIM active=false) is no member until reactivated.
    .where('m.suspendedAt', 'is', null)
    .executeTakeFirst()
  return row && { ...row, role: row.role as OrganizationRole }
}

/**
 * The member's role for a product: the highest of the role granted to them directly and the
 * roles their SCIM groups grant (a group bound to `{"alerting": "responder"}` gives each of its
 * members at least that).
 */
export async function findProductRole(
  db: Kysely<DB>,
  organizationId: string,
  memberId: string,
  product: Product,
): Promise<string | undefined> {
  const rows = await db
    .selectFrom('core.orgProductRoles')
    .select('role')
    .where('organizationId', '=', organizationId)
    .where('memberId', '=', memberId)
    .where('product', '=', product)
    .unionAll(
      db
        .selectFrom('core.scimGroupMembers as gm')
        .innerJoin('core.scimGroups as g', 'g.id', 'gm.groupId')
        .select(sql<string>`g.product_roles ->> ${product}`.as('role'))
        .where('gm.organizationId', '=', organizationId)
        .where('gm.memberId', '=', memberId)
        .where(sql<boolean>`g.product_roles ? ${product}`),
    )
    .execute()
  return highestProductRole(rows.map((row) => row.role))
}

function highestProductRole(held: string[]): string | undefined {
  const rank = (role: string) => productRoles.indexOf(role as ProductRole)
  return held.reduce<string | undefined>((best, role) => (best === undefined || rank(role) > rank(best) ? role : best), undefined)
}

/** Every product role the member holds, each the highest of the direct grant and their SCIM groups' grants. */
export async function heldProductRoles(db: Kysely<DB>, organizationId: string, memberId: string): Promise<Partial<Record<Product, ProductRole>>> {
  const [direct, groups] = await Promise.all([
    db.selectFrom('core.orgProductRoles').select(['product', 'role']).where('organizationId', '=', organizationId).where('memberId', '=', memberId).execute(),
    db
      .selectFrom('core.scimGroupMembers as gm')
      .innerJoin('core.scimGroups as g', 'g.id', 'gm.groupId')
      .select('g.productRoles')
      .where('gm.organizationId', '=', organizationId)
      .where('gm.memberId', '=', memberId)
      .execute(),
  ])
  const granted = [...direct, ...groups.flatMap((group) => Object.entries(group.productRoles as Record<string, string>).map(([product, role]) => ({ product, role })))]
  const held: Partial<Record<Product, ProductRole>> = {}
  for (const product of new Set(granted.map((grant) => grant.product))) {
    const role = highestProductRole(granted.filter((grant) => grant.product === product).map((grant) => grant.role))
    if (role) held[product as Product] = role as ProductRole
  }
  return held
}
