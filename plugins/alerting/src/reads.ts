import { sql } from 'kysely'
import { containing, paged, type Executor, type Page } from '@svc/db'
import { deploysIn } from './intake/index.js'

// What other surfaces may know of alerting's tables (the insights surface: an alert as an
// incident, its timeline, deploys before it, alerts alike). Reads only, each scoped to one
// organization; the tables and their shape stay alerting's own.

/** An alert as an incident. */
export async function alertIncident(db: Executor, organizationId: string, alertId: string) {
  return db
    .selectFrom('divinux.alerts')
    .select(['id', 'title', 'description', 'service', 'priority', 'status', 'firstSeenAt', 'resolvedAt', 'occurrences', 'labels'])
    .where('organizationId', '=', organizationId)
    .where('id', '=', alertId)
    .executeTakeFirst()
}

/** Alerts by id, for showing the incidents something links to; ids of other organizations are absent. */
export async function alertSummaries(db: Executor, organizationId: string, alertIds: string[]) {
  if (alertIds.length === 0) return new Map<string, never>()
  const rows = await db
    .selectFrom('divinux.alerts')
    .select(['id', 'title', 'priority', 'status', 'service', 'firstSeenAt', 'resolvedAt'])
    .where('organizationId', '=', organizationId)
    .where('id', 'in', alertIds)
    .execute()
  return new Map(rows.map((row) => [row.id, row]))
}

export type AlertSummary = Awaited<ReturnType<typeof alertSummaries>> extends Map<string, infer Row> ? Row : never

/** The first entries of an alert's timeline, oldest first. */
export async function alertTimeline(db: Executor, organizationId: string, alertId: string, limit: number) {
  return db
    .selectFrom('divinux.alertEvents')
    .select(['type', 'data', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('alertId', '=', alertId)
    .orderBy('createdAt')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** Deploys of the organization in (`from`, `to`], newest first (the intake module's one read of deploys). */
export async function deploysBetween(db: Executor, organizationId: string, from: Date, to: Date, limit: number) {
  return deploysIn(db, organizationId, { from, to, limit })
}

/** Resolved alerts of the last `lookbackDays` whose titles are alike (pg_trgm similarity), most alike first. */
export async function similarResolvedAlerts(
  db: Executor,
  organizationId: string,
  like: { title: string; exceptId: string; lookbackDays: number; threshold: number; limit: number },
) {
  const result = await sql<{ id: string; title: string; similarity: number; resolvedAt: Date | null }>`
    select a.id, a.title, similarity(a.title, ${like.title}) as similarity, a.resolved_at
    from divinux.alerts a
    where a.organization_id = ${organizationId} and a.status = 'resolved' and a.id <> ${like.exceptId}
      and a.created_at > now() - make_interval(days => ${like.lookbackDays})
      and similarity(a.title, ${like.title}) >= ${like.threshold}
    order by similarity desc, a.resolved_at desc nulls last
    limit ${like.limit}`.execute(db)
  return result.rows
}

export interface AlertSearch {
  q?: string
  from?: string
  to?: string
}

/**
 * Alerts matching every word (title or description, any letter case) first seen in a range, newest first.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function searchAlerts(db: Executor, organizationId: string, search: AlertSearch, page: Page) {
  let query = db.selectFrom('divinux.alerts').where('organizationId', '=', organizationId)
  for (const word of (search.q ?? '').split(/\s+/).filter(Boolean)) {
    const pattern = containing(word)
    query = query.where((eb) => eb.or([eb('title', 'ilike', pattern), eb('description', 'ilike', pattern)]))
  }
  if (search.from) query = query.where('firstSeenAt', '>=', new Date(search.from))
  if (search.to) query = query.where('firstSeenAt', '<', new Date(search.to))
  return paged(
    query,
    (rows) =>
      rows
        .select(['id', 'title', 'priority', 'status', 'service', 'firstSeenAt', 'resolvedAt'])
        .orderBy('firstSeenAt', 'desc')
        .orderBy('id', 'desc'),
    page,
  )
}

/** Whether the organization has an escalation policy with this id (synthetics' alert rules). */
export async function escalationPolicyExists(db: Executor, organizationId: string, policyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.escalationPolicies')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('id', '=', policyId)
    .executeTakeFirst()
  return row !== undefined
}

/** How many alerts, how fast they were acknowledged and resolved: means over those that were. */
export interface AlertResponseStats {
  alerts: number
  acknowledged: number
  resolved: number
  /** Mean time to acknowledge, seconds; null when none was acknowledged. */
  mttaSeconds: number | null
  /** Mean time to resolve, seconds; null when none was resolved. */
  mttrSeconds: number | null
}

const responseStats = sql<AlertResponseStats>`json_build_object(
  'alerts', count(*)::int,
  'acknowledged', count(acknowledged_at)::int,
  'resolved', count(resolved_at)::int,
  'mttaSeconds', round(avg(extract(epoch from acknowledged_at - created_at))::numeric, 1)::float8,
  'mttrSeconds', round(avg(extract(epoch from resolved_at - created_at))::numeric, 1)::float8)`

/**
 * The alerts opened in [from, to), for the platform's incidents report: totals, by priority, by
 * service and by UTC day, computed in the database over all of them, and the first `rowLimit`
 * alerts themselves (oldest first).
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function alertReportBetween(db: Executor, organizationId: string, from: Date, to: Date, rowLimit: number) {
  const opened = sql`organization_id = ${organizationId} and created_at >= ${from} and created_at < ${to}`
  const [totals, byPriority, byService, perDay, rows] = await Promise.all([
    sql<{ stats: AlertResponseStats }>`select ${responseStats} as stats from divinux.alerts where ${opened}`.execute(db),
    sql<{ key: string; stats: AlertResponseStats }>`
      select priority as key, ${responseStats} as stats from divinux.alerts where ${opened} group by priority order by priority`.execute(
      db,
    ),
    sql<{ key: string | null; stats: AlertResponseStats }>`
      select service as key, ${responseStats} as stats from divinux.alerts where ${opened}
      group by service order by count(*) desc, service nulls last`.execute(db),
    sql<{ day: string; alerts: number }>`
      select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as alerts
      from divinux.alerts where ${opened} group by 1 order by 1`.execute(db),
    db
      .selectFrom('divinux.alerts')
      .select(['id', 'title', 'priority', 'service', 'source', 'status', 'createdAt', 'acknowledgedAt', 'resolvedAt'])
      .where('organizationId', '=', organizationId)
      .where('createdAt', '>=', from)
      .where('createdAt', '<', to)
      .orderBy('createdAt')
      .orderBy('id')
      .limit(rowLimit)
      .execute(),
  ])
  return {
    totals: totals.rows[0]!.stats,
    byPriority: byPriority.rows.map((row) => ({ priority: row.key, ...row.stats })),
    byService: byService.rows.map((row) => ({ service: row.key, ...row.stats })),
    perDay: perDay.rows,
    rows,
  }
}
