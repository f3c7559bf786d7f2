import type { Kysely } from 'kysely'
import {
  dropMonthlyPartitionsBefore,
  ensureMonthlyPartitions,
  paged,
  type DB,
  type Executor,
  type Page,
  type PartitionedTable,
} from '@svc/db'

export const USER_ACTIVITIES: PartitionedTable = { table: 'core.user_activities' }

const DAY_MS = 86_400_000
/** Months created ahead of today, as for analytics events. */
const AHEAD_DAYS = 62

/** Keeps user activity bounded at `now`: months ahead exist, months wholly past retention are dropped. */
export async function maintainUserActivities(db: Kysely<DB>, retentionDays: number, now = new Date()) {
  const oldest = new Date(now.getTime() - retentionDays * DAY_MS)
  const created = await ensureMonthlyPartitions(USER_ACTIVITIES, db, oldest, new Date(now.getTime() + AHEAD_DAYS * DAY_MS))
  const dropped = await dropMonthlyPartitionsBefore(USER_ACTIVITIES, db, oldest)
  return { created, dropped }
}

/**
 * One user's activity, the most recent first; with `organization`, only what they did in that
 * organization since they joined it (what its admins may see: decision 0022).
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export function listUserActivities(db: Executor, userId: string, page: Page, organization?: { id: string; joinedAt: Date }) {
  let rows = db.selectFrom('core.userActivities').where('userId', '=', userId)
  if (organization) rows = rows.where('organizationId', '=', organization.id).where('lastAt', '>=', organization.joinedAt)
  return paged(
    rows,
    (query) =>
      query
        .select(['kind', 'product', 'day', 'organizationId', 'actedBy', 'ip', 'userAgent', 'firstAt', 'lastAt', 'requests'])
        .orderBy('lastAt', 'desc')
        .orderBy('day', 'desc')
        .orderBy('activityKey'),
    page,
  )
}

/**
 * When each of the organization's members `memberIds` was last active there (API use since
 * joining), for its member list; a member with none is left out.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function lastActiveInOrganization(db: Executor, organizationId: string, memberIds: string[]): Promise<Map<string, Date>> {
  if (memberIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('core.organizationMembers as m')
    .innerJoin('core.userActivities as a', (join) =>
      join.onRef('a.userId', '=', 'm.userId').onRef('a.organizationId', '=', 'm.organizationId').onRef('a.lastAt', '>=', 'm.joinedAt'),
    )
    .select(['m.id', (eb) => eb.fn.max('a.lastAt').as('lastAt')])
    .where('m.organizationId', '=', organizationId)
    .where('m.id', 'in', memberIds)
    .groupBy('m.id')
    .execute()
  return new Map(rows.map((row) => [row.id, new Date(row.lastAt)]))
}
