import { sql } from 'kysely'
import { lockUntilCommit, type Executor, type Page, paged } from '@svc/db'

const organizationColumns = ['o.id', 'o.name', 'o.slug', 'o.createdAt', 'o.updatedAt'] as const
const columns = ['id', 'name', 'slug', 'createdAt', 'updatedAt'] as const

export async function listOrganizationsOfUser(db: Executor, userId: string, page: Page) {
  const base = db
    .selectFrom('core.organizations as o')
    .innerJoin('core.organizationMembers as m', 'm.organizationId', 'o.id')
    .where('m.userId', '=', userId)
    // A membership the identity provider suspended (SCIM active=false) grants nothing, so it is not listed.
    .where('m.suspendedAt', 'is', null)
    // Nor does an invitation not yet accepted (decision 0023).
    .where('m.joinedAt', 'is not', null)
  return paged(
    base,
    (rows) =>
      rows
        .select([...organizationColumns, 'm.role'])
        .orderBy('o.name')
        .orderBy('o.id'),
    page,
  )
}

export async function findOrganization(db: Executor, organizationId: string) {
  return db.selectFrom('core.organizations as o').select(organizationColumns).where('o.id', '=', organizationId).executeTakeFirst()
}

export async function slugTaken(db: Executor, slug: string, exceptOrganizationId?: string): Promise<boolean> {
  let query = db.selectFrom('core.organizations').select('id').where('slug', '=', slug)
  if (exceptOrganizationId) query = query.where('id', '<>', exceptOrganizationId)
  return (await query.executeTakeFirst()) !== undefined
}

export async function insertOrganization(db: Executor, values: { name: string; slug: string; billingExempt: boolean; createdBy: string }) {
  return db.insertInto('core.organizations').values(values).returning(columns).executeTakeFirstOrThrow()
}

/**
 * How many organizations this person created that still exist, with their creations serialized
 * until the caller's transaction ends, so two requests at once cannot both pass the limit.
 */
export async function lockOrganizationsCreatedBy(db: Executor, userId: string): Promise<number> {
  await lockUntilCommit(db, `organizations-created-by:${userId}`)
  const { created } = await db
    .selectFrom('core.organizations')
    .select((eb) => eb.fn.countAll<number>().as('created'))
    .where('createdBy', '=', userId)
    .executeTakeFirstOrThrow()
  return created
}

export async function updateOrganization(db: Executor, organizationId: string, changes: { name?: string; slug?: string }) {
  return db
    .updateTable('core.organizations')
    .set({ ...changes, updatedAt: sql<Date>`now()` })
    .where('id', '=', organizationId)
    .returning(columns)
    .executeTakeFirstOrThrow()
}

/** Removes the organization; members, roles and subscriptions go with it (ON DELETE CASCADE). */
export async function deleteOrganization(db: Executor, organizationId: string): Promise<void> {
  await db.deleteFrom('core.organizations').where('id', '=', organizationId).execute()
}

/** The organization's owners' addresses, with its name (who hears about its billing). */
export async function ownersOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('core.organizationMembers as member')
    .innerJoin('core.users as user', 'user.id', 'member.userId')
    .innerJoin('core.organizations as organization', 'organization.id', 'member.organizationId')
    .select(['user.email', 'organization.name'])
    .where('member.organizationId', '=', organizationId)
    .where('member.role', '=', 'owner')
    .where('member.joinedAt', 'is not', null)
    .execute()
}
