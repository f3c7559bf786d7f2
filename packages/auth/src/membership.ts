import type { Kysely } from 'kysely'
import type { DB } from '@svc/db'
import type { OrganizationRole, Product } from './roles.js'

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
    .executeTakeFirst()
  return row && { ...row, role: row.role as OrganizationRole }
}

export async function findProductRole(
  db: Kysely<DB>,
  organizationId: string,
  memberId: string,
  product: Product,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('core.orgProductRoles')
    .select('role')
    .where('organizationId', '=', organizationId)
    .where('memberId', '=', memberId)
    .where('product', '=', product)
    .executeTakeFirst()
  return row?.role
}
