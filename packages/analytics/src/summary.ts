import { sql } from 'kysely'
import type { Executor } from '@svc/db'

export type SummaryInterval = 'day' | 'week'

export interface UsageBucket {
  /** The bucket's first UTC day: the day, or the Monday of an ISO week. */
  start: string
  events: number
  /** Distinct users (and anonymous ids) with at least one of the counted events in the bucket. */
  activeUsers: number
  byEvent: Record<string, number>
}

const DAY_MS = 86_400_000
/** The daily users' rows for "any event" (store.ts). */
const ANY_EVENT = ''

const dayOf = (value: Date) => value.toISOString().slice(0, 10)
/**
 * The first UTC day not in a range that ends (exclusive) at `to`: `to`'s own day unless `to` is
 * its midnight. A range that ends at a moment of today (a report of the last 24 hours) holds
 * today; one that ends at midnight (the API's `to` date) does not hold that day.
 */
const endDayOf = (to: Date) => dayOf(new Date(Math.ceil(to.getTime() / DAY_MS) * DAY_MS))

function bucketStart(day: Date, interval: SummaryInterval): Date {
  if (interval === 'day') return day
  const sinceMonday = (day.getUTCDay() + 6) % 7
  return new Date(day.getTime() - sinceMonday * DAY_MS)
}

/**
 * Usage of one organization over the UTC days that [from, to) touches, by day or ISO week, from the daily
 * summaries (never the raw events: this answers in milliseconds whatever the event volume).
 * Every bucket of the range is present, empty ones with zeros.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function usageSummary(
  db: Executor,
  organizationId: string,
  range: { from: Date; to: Date; interval: SummaryInterval; event?: string },
): Promise<UsageBucket[]> {
  const { from, to, interval, event } = range
  const onlyEvent = event === undefined ? sql`true` : sql`event = ${event}`
  const day = dayOf
  const end = endDayOf(to)
  const [counts, users] = await Promise.all([
    sql<{ bucket: string; event: string; events: number }>`
      select to_char(date_trunc(${interval}, day), 'YYYY-MM-DD') as bucket, event, sum(events)::int8 as events
        from core.analytics_daily
       where organization_id = ${organizationId} and day >= ${day(from)}::date and day < ${end}::date and ${onlyEvent}
       group by 1, 2`.execute(db),
    // For one event the key makes (day, user) unique: a day's users are a plain count of an
    // index range. A week's are distinct over its days, by hashing rather than count(distinct)'s sort.
    interval === 'day'
      ? sql<{ bucket: string; users: number }>`
          select to_char(day, 'YYYY-MM-DD') as bucket, count(*)::int8 as users
            from core.analytics_daily_users
           where organization_id = ${organizationId} and event = ${event ?? ANY_EVENT} and day >= ${day(from)}::date and day < ${end}::date
           group by day`.execute(db)
      : sql<{ bucket: string; users: number }>`
          select to_char(week, 'YYYY-MM-DD') as bucket, count(*)::int8 as users
            from (select distinct date_trunc('week', day) as week, user_key
                    from core.analytics_daily_users
                   where organization_id = ${organizationId} and event = ${event ?? ANY_EVENT}
                     and day >= ${day(from)}::date and day < ${end}::date) weekly
           group by week`.execute(db),
  ])
  const buckets = new Map<string, UsageBucket>()
  for (let start = bucketStart(from, interval); start < to; start = new Date(start.getTime() + (interval === 'day' ? 1 : 7) * DAY_MS))
    buckets.set(day(start), { start: day(start), events: 0, activeUsers: 0, byEvent: {} })
  for (const row of counts.rows) {
    const bucket = buckets.get(row.bucket)
    if (!bucket) continue
    bucket.events += row.events
    bucket.byEvent[row.event] = row.events
  }
  for (const row of users.rows) {
    const bucket = buckets.get(row.bucket)
    if (bucket) bucket.activeUsers = row.users
  }
  return [...buckets.values()]
}

/**
 * Per event over the UTC days that [from, to) touches: how often, and by how many distinct users; and everyone active.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function usageByEvent(db: Executor, organizationId: string, from: Date, to: Date) {
  const day = dayOf
  const end = endDayOf(to)
  const [events, active] = await Promise.all([
    sql<{ event: string; events: number; users: number }>`
      select daily.event, daily.events, coalesce(people.users, 0)::int8 as users
        from (select event, sum(events)::int8 as events from core.analytics_daily
               where organization_id = ${organizationId} and day >= ${day(from)}::date and day < ${end}::date group by event) daily
        left join (select event, count(distinct user_key) as users from core.analytics_daily_users
                    where organization_id = ${organizationId} and event <> ${ANY_EVENT}
                      and day >= ${day(from)}::date and day < ${end}::date group by event) people
          on people.event = daily.event
       order by daily.events desc, daily.event`.execute(db),
    sql<{ users: number }>`
      select count(distinct user_key)::int8 as users from core.analytics_daily_users
       where organization_id = ${organizationId} and event = ${ANY_EVENT} and day >= ${day(from)}::date and day < ${end}::date`.execute(db),
  ])
  return { byEvent: events.rows, activeUsers: active.rows[0]?.users ?? 0 }
}
