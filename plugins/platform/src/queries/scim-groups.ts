import { sql, type RawBuilder } from 'kysely'
import { paged, type Executor, type Page } from '@svc/db'

const groupColumns = ['g.id', 'g.displayName', 'g.externalId', 'g.productRoles', 'g.createdAt', 'g.updatedAt'] as const

function groupsOf(db: Executor, organizationId: string) {
  return db.selectFrom('core.scimGroups as g').where('g.organizationId', '=', organizationId)
}

export type ScimGroupRow = NonNullable<Awaited<ReturnType<typeof findScimGroup>>>

export async function listScimGroups(db: Executor, organizationId: string, filter: RawBuilder<boolean> | undefined, page: Page) {
  const query = filter ? groupsOf(db, organizationId).where(filter) : groupsOf(db, organizationId)
  return paged(query, (rows) => rows.select(groupColumns).orderBy('g.createdAt').orderBy('g.id'), page)
}

export async function findScimGroup(db: Executor, organizationId: string, groupId: string, forUpdate = false) {
  const query = groupsOf(db, organizationId).select(groupColumns).where('g.id', '=', groupId)
  return (forUpdate ? query.forUpdate('g') : query).executeTakeFirst()
}

export async function groupNameTaken(db: Executor, organizationId: string, displayName: string, exceptGroupId?: string): Promise<boolean> {
  let query = db
    .selectFrom('core.scimGroups')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where(sql`lower(display_name)`, '=', displayName.toLowerCase())
  if (exceptGroupId) query = query.where('id', '<>', exceptGroupId)
  return (await query.executeTakeFirst()) !== undefined
}

export interface GroupMember {
  id: string
  display: string
}

/** The members of each group, with what to show for each: the display the provider sent, or the userName. */
export async function membersOfGroups(db: Executor, organizationId: string, groupIds: string[]) {
  const members = new Map<string, GroupMember[]>(groupIds.map((id) => [id, []]))
  if (groupIds.length === 0) return members
  const rows = await db
    .selectFrom('core.scimGroupMembers as gm')
    .innerJoin('core.organizationMembers as m', 'm.id', 'gm.memberId')
    .select(['gm.groupId', 'm.id', sql<string>`coalesce(gm.display, m.user_name)`.as('display')])
    .where('gm.organizationId', '=', organizationId)
    .where('gm.groupId', 'in', groupIds)
    .orderBy('gm.createdAt')
    .orderBy('m.id')
    .execute()
  for (const row of rows) members.get(row.groupId)?.push({ id: row.id, display: row.display })
  return members
}

/** Of these ids, the ones that are members of the organization. */
export async function existingMembers(db: Executor, organizationId: string, memberIds: string[]): Promise<string[]> {
  if (memberIds.length === 0) return []
  const rows = await db
    .selectFrom('core.organizationMembers')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('id', 'in', memberIds)
    .execute()
  return rows.map((row) => row.id)
}

export async function insertScimGroup(
  db: Executor,
  organizationId: string,
  values: { displayName: string; externalId: string | null },
): Promise<string> {
  const { id } = await db
    .insertInto('core.scimGroups')
    .values({ organizationId, ...values })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

export async function updateScimGroup(
  db: Executor,
  organizationId: string,
  groupId: string,
  values: { displayName: string; externalId: string | null },
): Promise<void> {
  await db
    .updateTable('core.scimGroups')
    .set({ ...values, updatedAt: sql<Date>`clock_timestamp()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', groupId)
    .execute()
}

/** Makes the group's members exactly `members`; answers who was added and who removed. */
export async function setGroupMembers(
  db: Executor,
  organizationId: string,
  groupId: string,
  members: { id: string; display: string | null }[],
) {
  const current = new Set((await membersOfGroups(db, organizationId, [groupId])).get(groupId)?.map((member) => member.id))
  const wanted = new Set(members.map((member) => member.id))
  const added = [...wanted].filter((id) => !current.has(id))
  const removed = [...current].filter((id) => !wanted.has(id))
  if (removed.length > 0) {
    await db
      .deleteFrom('core.scimGroupMembers')
      .where('organizationId', '=', organizationId)
      .where('groupId', '=', groupId)
      .where('memberId', 'in', removed)
      .execute()
  }
  if (members.length > 0) {
    await db
      .insertInto('core.scimGroupMembers')
      .values(members.map((member) => ({ organizationId, groupId, memberId: member.id, display: member.display })))
      .onConflict((oc) =>
        oc.columns(['groupId', 'memberId']).doUpdateSet({ display: sql`coalesce(excluded.display, core.scim_group_members.display)` }),
      )
      .execute()
  }
  return { added, removed }
}

export async function deleteScimGroup(db: Executor, organizationId: string, groupId: string): Promise<void> {
  await db.deleteFrom('core.scimGroups').where('organizationId', '=', organizationId).where('id', '=', groupId).execute()
}

export async function setGroupProductRoles(db: Executor, organizationId: string, groupId: string, productRoles: Record<string, string>) {
  return db
    .updateTable('core.scimGroups as g')
    .set({ productRoles, updatedAt: sql<Date>`clock_timestamp()` })
    .where('g.organizationId', '=', organizationId)
    .where('g.id', '=', groupId)
    .returning(groupColumns)
    .executeTakeFirst()
}

export async function countGroupMembers(db: Executor, organizationId: string, groupIds: string[]): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('core.scimGroupMembers')
    .select(['groupId', (eb) => eb.fn.countAll<number>().as('count')])
    .where('organizationId', '=', organizationId)
    .where('groupId', 'in', groupIds)
    .groupBy('groupId')
    .execute()
  return new Map(rows.map((row) => [row.groupId, Number(row.count)]))
}
