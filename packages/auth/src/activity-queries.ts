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
 * One user's activity, the most recent first.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export function listUserActivities(db: Executor, userId: string, page: Page) {
  return paged(
    db.selectFrom('core.userActivities').where('userId', '=', userId),
    (query) =>
      query
        .select(['kind', 'product', 'day', 'actedBy', 'ip', 'userAgent', 'firstAt', 'lastAt', 'requests'])
        .orderBy('lastAt', 'desc')
        .orderBy('day', 'desc')
        .orderBy('activityKey'),
    page,
  )
}
