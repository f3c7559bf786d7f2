import { sql, type RawBuilder } from 'kysely'
import type { Executor, Json } from '@svc/db'
import { membersOf } from '@svc/members'

// SCIM Users are the memberships of one organization (see docs/decisions/0006).

const userColumns = [
  'm.id',
  'm.userId',
  'm.role',
  'm.userName',
  'm.externalId',
  'm.scimAttributes',
  'm.suspendedAt',
  'm.createdAt',
  'm.updatedAt',
  'u.email',
  'u.displayName as accountDisplayName',
  'u.givenName as accountGivenName',
  'u.familyName as accountFamilyName',
] as const

export type ScimUserRow = NonNullable<Awaited<ReturnType<typeof findScimUser>>>

/**
 * A page of Users and how many match. Counting and paging read the memberships alone (the filter
 * needs nothing else), so a deep `startIndex` walks an index instead of joining every skipped
 * row; only the page's rows are joined to their accounts.
 */
export async function listScimUsers(
  db: Executor,
  organizationId: string,
  filter: RawBuilder<boolean> | undefined,
  page: { offset: number; limit: number },
) {
  const members = db.selectFrom('core.organizationMembers as m').where('m.organizationId', '=', organizationId)
  const matching = filter ? members.where(filter) : members
  const pageIds = matching.select('m.id').orderBy('m.createdAt').orderBy('m.id').offset(page.offset).limit(page.limit)
  const [rows, count] = await Promise.all([
    page.limit === 0
      ? Promise.resolve([])
      : membersOf(db, organizationId).select(userColumns).where('m.id', 'in', pageIds).orderBy('m.createdAt').orderBy('m.id').execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.total) }
}

/** One SCIM User; `forUpdate` locks the membership for a read-modify-write. */
export async function findScimUser(db: Executor, organizationId: string, memberId: string, forUpdate = false) {
  const query = membersOf(db, organizationId).select(userColumns).where('m.id', '=', memberId)
  return (forUpdate ? query.forUpdate('m') : query).executeTakeFirst()
}

/** Another membership of the organization already holding this userName (case-insensitively). */
export async function userNameTaken(db: Executor, organizationId: string, userName: string, exceptMemberId?: string): Promise<boolean> {
  let query = db
    .selectFrom('core.organizationMembers')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where(sql`lower(user_name)`, '=', userName.toLowerCase())
  if (exceptMemberId) query = query.where('id', '<>', exceptMemberId)
  return (await query.executeTakeFirst()) !== undefined
}

/**
 * The platform user a new SCIM User is linked to: the one with this verified e-mail who is not
 * yet a member of the organization (one who has signed in preferred), or else a new pending user that
 * the first sign-in with the address claims. E-mails need not be unique among SCIM Users, so two
 * of them sharing an address are two memberships, of two accounts.
 */
export async function accountForScimUser(db: Executor, organizationId: string, email: string): Promise<string> {
  const existing = await db
    .selectFrom('core.users as u')
    .select('u.id')
    .where(sql`lower(u.email)`, '=', email.toLowerCase())
    // An address its identity provider has not verified links to nothing (decision 0012).
    .where((where) => where.or([where('u.emailVerified', '=', true), where('u.idpSubject', 'is', null)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('core.organizationMembers as m')
            .select('m.id')
            .where('m.organizationId', '=', organizationId)
            .whereRef('m.userId', '=', 'u.id'),
        ),
      ),
    )
    .orderBy(sql`u.idp_subject is null`)
    .orderBy('u.createdAt')
    .executeTakeFirst()
  if (existing) return existing.id
  const created = await db.insertInto('core.users').values({ email }).returning('id').executeTakeFirstOrThrow()
  return created.id
}

export interface ScimUserValues {
  userName: string
  externalId: string | null
  attributes: Json
  active: boolean
}

export async function insertScimUser(
  db: Executor,
  organizationId: string,
  userId: string,
  tokenId: string,
  values: ScimUserValues,
): Promise<string> {
  const { id } = await db
    .insertInto('core.organizationMembers')
    .values({
      organizationId,
      userId,
      role: 'member',
      userName: values.userName,
      externalId: values.externalId,
      scimAttributes: values.attributes,
      suspendedAt: values.active ? null : sql<Date>`now()`,
      provisionedByTokenId: tokenId,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

/** Replaces the SCIM attributes; a suspension keeps its first time. */
export async function replaceScimUser(db: Executor, organizationId: string, memberId: string, values: ScimUserValues): Promise<void> {
  await db
    .updateTable('core.organizationMembers')
    .set({
      userName: values.userName,
      externalId: values.externalId,
      scimAttributes: values.attributes,
      suspendedAt: values.active ? null : sql<Date>`coalesce(suspended_at, now())`,
      // clock_timestamp, not now(): two changes in one transaction still get two versions.
      updatedAt: sql<Date>`clock_timestamp()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', memberId)
    .execute()
}

export async function deleteScimUser(db: Executor, organizationId: string, memberId: string): Promise<void> {
  await db.deleteFrom('core.organizationMembers').where('organizationId', '=', organizationId).where('id', '=', memberId).execute()
}

/** Owners other than this member whose membership is not suspended. */
export async function otherActiveOwners(db: Executor, organizationId: string, memberId: string): Promise<number> {
  const { total } = await db
    .selectFrom('core.organizationMembers')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('organizationId', '=', organizationId)
    .where('role', '=', 'owner')
    .where('suspendedAt', 'is', null)
    .where('id', '<>', memberId)
    .executeTakeFirstOrThrow()
  return Number(total)
}

/** The SCIM Groups of each member, for the read-only `groups` attribute. */
export async function groupsOfMembers(db: Executor, organizationId: string, memberIds: string[]) {
  const groups = new Map<string, { id: string; displayName: string }[]>(memberIds.map((id) => [id, []]))
  if (memberIds.length === 0) return groups
  const rows = await db
    .selectFrom('core.scimGroupMembers as gm')
    .innerJoin('core.scimGroups as g', 'g.id', 'gm.groupId')
    .select(['gm.memberId', 'g.id', 'g.displayName'])
    .where('gm.organizationId', '=', organizationId)
    .where('gm.memberId', 'in', memberIds)
    .orderBy('g.displayName')
    .execute()
  for (const row of rows) groups.get(row.memberId)?.push({ id: row.id, displayName: row.displayName })
  return groups
}
