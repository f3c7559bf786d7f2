import type { Executor } from '@svc/db'

// The organization's people as alerting needs them: who may be on call, and how to name them.
// core.users and core.organization_members are the platform's shared identity tables.

/** Of the given users, those who are active members of the organization (suspended and invited members are not). */
export async function activeMembersAmong(db: Executor, organizationId: string, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('core.organizationMembers')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('userId', 'in', userIds)
    .where('suspendedAt', 'is', null)
    .where('joinedAt', 'is not', null)
    .execute()
  return new Set(rows.map((row) => row.userId))
}

/** The e-mail address of each given user. */
export async function emailsOf(db: Executor, userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map()
  const rows = await db.selectFrom('core.users').select(['id', 'email']).where('id', 'in', userIds).execute()
  return new Map(rows.map((row) => [row.id, row.email]))
}
