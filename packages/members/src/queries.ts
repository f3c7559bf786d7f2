import { sql } from 'kysely'
import { containing, paged, type Executor } from '@svc/db'
import type { OrganizationRole, Product, ProductRole } from '@svc/auth'

export type ProductRoles = Partial<Record<Product, ProductRole>>

/**
 * What an organization sees of its memberships. An invitation reveals nothing about the account
 * behind the address (decision 0023): until it is accepted, the name is not shown and the person
 * counts as pending, whether or not they have ever signed in anywhere.
 */
const memberColumns = [
  'm.id',
  'm.userId',
  'u.email',
  sql<string | null>`case when m.joined_at is null then null else u.display_name end`.as('displayName'),
  'm.role',
  'm.createdAt',
  'm.updatedAt',
  'm.joinedAt',
  sql<boolean>`m.joined_at is null or u.idp_subject is null`.as('pending'),
  sql<boolean>`m.suspended_at is not null`.as('suspended'),
  sql<boolean>`m.joined_at is null`.as('invited'),
] as const

/** The organization's memberships joined to their accounts (`m`, `u`): members and SCIM Users alike. */
export function membersOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('core.organizationMembers as m')
    .innerJoin('core.users as u', 'u.id', 'm.userId')
    .where('m.organizationId', '=', organizationId)
}

export interface MemberFilter {
  role?: OrganizationRole
  search?: string
  offset: number
  limit: number
}

export async function listMembers(db: Executor, organizationId: string, filter: MemberFilter) {
  let query = membersOf(db, organizationId)
  if (filter.role) query = query.where('m.role', '=', filter.role)
  if (filter.search) query = query.where(sql`lower(u.email)`, 'like', containing(filter.search.toLowerCase()))
  return paged(query, (rows) => rows.select(memberColumns).orderBy('u.email').orderBy('m.id'), filter)
}

export async function findMember(db: Executor, organizationId: string, memberId: string) {
  return membersOf(db, organizationId).select(memberColumns).where('m.id', '=', memberId).executeTakeFirst()
}

export async function findMemberByUser(db: Executor, organizationId: string, userId: string) {
  return membersOf(db, organizationId).select(memberColumns).where('m.userId', '=', userId).executeTakeFirst()
}

/**
 * A new membership; `invited`: it waits for its invitation to be accepted (`joined_at` null) and
 * grants nothing until then.
 */
export async function insertMember(db: Executor, organizationId: string, userId: string, role: OrganizationRole, invited = false) {
  const { id } = await db
    .insertInto('core.organizationMembers')
    .values({ organizationId, userId, role, ...(invited ? { joinedAt: null } : {}) })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

export async function setMemberRole(db: Executor, organizationId: string, memberId: string, role: OrganizationRole): Promise<void> {
  await db
    .updateTable('core.organizationMembers')
    .set({ role, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', memberId)
    .execute()
}

export async function deleteMember(db: Executor, organizationId: string, memberId: string): Promise<void> {
  await db.deleteFrom('core.organizationMembers').where('organizationId', '=', organizationId).where('id', '=', memberId).execute()
}

export async function countOwners(db: Executor, organizationId: string): Promise<number> {
  const { total } = await db
    .selectFrom('core.organizationMembers')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('organizationId', '=', organizationId)
    .where('role', '=', 'owner')
    // An owner still to accept an invitation owns nothing yet.
    .where('joinedAt', 'is not', null)
    .executeTakeFirstOrThrow()
  return total
}

/**
 * The platform user with this e-mail (case-insensitively; one who has signed in preferred),
 * or a new pending user that the first verified sign-in with the address will claim. An
 * account whose address its identity provider has not verified is never matched (decision 0012).
 */
export async function userForEmail(db: Executor, email: string): Promise<string> {
  const existing = await db
    .selectFrom('core.users')
    .select('id')
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where((where) => where.or([where('emailVerified', '=', true), where('idpSubject', 'is', null)]))
    .orderBy(sql`idp_subject is null`)
    .orderBy('createdAt')
    .executeTakeFirst()
  if (existing) return existing.id
  const created = await db.insertInto('core.users').values({ email }).returning('id').executeTakeFirstOrThrow()
  return created.id
}

export async function productRolesOfMembers(db: Executor, organizationId: string, memberIds: string[]): Promise<Map<string, ProductRoles>> {
  const roles = new Map<string, ProductRoles>(memberIds.map((id) => [id, {}]))
  if (memberIds.length === 0) return roles
  const rows = await db
    .selectFrom('core.orgProductRoles')
    .select(['memberId', 'product', 'role'])
    .where('organizationId', '=', organizationId)
    .where('memberId', 'in', memberIds)
    .execute()
  for (const row of rows) {
    const held = roles.get(row.memberId)
    if (held) held[row.product as Product] = row.role as ProductRole
  }
  return roles
}

/** One member with the product roles granted to them directly, or undefined. */
export async function findMemberWithProductRoles(db: Executor, organizationId: string, memberId: string) {
  const member = await findMember(db, organizationId, memberId)
  if (!member) return undefined
  const roles = await productRolesOfMembers(db, organizationId, [member.id])
  return { member, productRoles: roles.get(member.id) ?? {} }
}

/** Replaces a member's whole set of product roles: a product left out has no role. */
export async function replaceProductRoles(
  db: Executor,
  organizationId: string,
  memberId: string,
  productRoles: ProductRoles,
): Promise<void> {
  await db.deleteFrom('core.orgProductRoles').where('organizationId', '=', organizationId).where('memberId', '=', memberId).execute()
  const entries = Object.entries(productRoles).filter((entry): entry is [string, ProductRole] => entry[1] !== undefined)
  if (entries.length === 0) return
  await db
    .insertInto('core.orgProductRoles')
    .values(entries.map(([product, role]) => ({ organizationId, memberId, product, role })))
    .execute()
}

/**
 * Serializes every change to an organization's membership: whoever holds the row lock
 * reads and writes the members alone until commit, so invariants checked inside hold.
 */
export async function lockOrganization(db: Executor, organizationId: string): Promise<boolean> {
  const row = await db.selectFrom('core.organizations').select('id').where('id', '=', organizationId).forUpdate().executeTakeFirst()
  return row !== undefined
}
