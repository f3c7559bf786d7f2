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

/**
 * How many incidents, how fast they were acknowledged and resolved: means over those that were,
 * each incident's times taken from detection as the incident itself shows them (`mttaSeconds`,
 * `mttrSeconds`, whole seconds), so a report over one incident says what its page says.
 */
export interface IncidentResponseStats {
  incidents: number
  acknowledged: number
  resolved: number
  /** Mean time to acknowledge, seconds; null when none was acknowledged. */
  mttaSeconds: number | null
  /** Mean time to resolve, seconds; null when none was resolved. */
  mttrSeconds: number | null
}

const responseStats = sql<IncidentResponseStats>`json_build_object(
  'incidents', count(*)::int,
  'acknowledged', count(acknowledged_at)::int,
  'resolved', count(resolved_at)::int,
  'mttaSeconds', round(avg(seconds_to_acknowledge)::numeric, 1)::float8,
  'mttrSeconds', round(avg(seconds_to_resolve)::numeric, 1)::float8)`

/**
 * The incidents detected in [from, to), for the platform's incidents report: totals, by severity,
 * by service (the services of an incident's alerts; an incident of two services counts under
 * each, one of none under none) and by UTC day, computed in the database over all of them; the
 * first `rowLimit` incidents themselves (oldest first), and how many alerts arrived in the period.
 * An incident merged into another is counted there, not again.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function incidentReportBetween(db: Executor, organizationId: string, from: Date, to: Date, rowLimit: number) {
  const opened = sql`
    with opened as (
      select i.id, i.number, i.title, i.severity, i.status, i.detected_at, i.acknowledged_at, i.resolved_at, i.fields,
        (select t.key from divinux.incident_types t where t.id = i.type_id and t.organization_id = ${organizationId}) as type,
        -- greatest() passes over a null: the case keeps a time not reached null.
        case when i.acknowledged_at is not null then greatest(0, round(extract(epoch from i.acknowledged_at - i.detected_at)))::int end
          as seconds_to_acknowledge,
        case when i.resolved_at is not null then greatest(0, round(extract(epoch from i.resolved_at - i.detected_at)))::int end
          as seconds_to_resolve,
        array(
          select distinct a.service from divinux.incident_alerts l join divinux.alerts a on a.id = l.alert_id
          where l.organization_id = ${organizationId} and l.incident_id = i.id and a.service is not null
          order by a.service) as services,
        (select count(*) from divinux.incident_alerts l where l.organization_id = ${organizationId} and l.incident_id = i.id)::int as alerts
      from divinux.incidents i
      where i.organization_id = ${organizationId} and i.detected_at >= ${from} and i.detected_at < ${to} and i.merged_into is null
    )`
  const [totals, bySeverity, byService, perDay, rows, alerts] = await Promise.all([
    sql<{ stats: IncidentResponseStats }>`${opened} select ${responseStats} as stats from opened`.execute(db),
    sql<{ key: string; stats: IncidentResponseStats }>`
      ${opened} select severity as key, ${responseStats} as stats from opened group by severity order by severity`.execute(db),
    sql<{ key: string | null; stats: IncidentResponseStats }>`
      ${opened} select service as key, ${responseStats} as stats
      from opened left join lateral unnest(opened.services) as service on true
      group by service order by count(*) desc, service nulls last`.execute(db),
    sql<{ day: string; incidents: number }>`
      ${opened} select to_char(date_trunc('day', detected_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as incidents
      from opened group by 1 order by 1`.execute(db),
    sql<{
      id: string
      number: number
      title: string
      severity: string
      status: string
      services: string[]
      alerts: number
      detectedAt: Date
      acknowledgedAt: Date | null
      resolvedAt: Date | null
      secondsToAcknowledge: number | null
      secondsToResolve: number | null
      type: string | null
      fields: Record<string, unknown>
    }>`
      ${opened} select id, number, title, severity, status, services, alerts, detected_at as "detectedAt",
        acknowledged_at as "acknowledgedAt", resolved_at as "resolvedAt", seconds_to_acknowledge as "secondsToAcknowledge",
        seconds_to_resolve as "secondsToResolve", type, fields
      from opened order by detected_at, number limit ${rowLimit}`.execute(db),
    db
      .selectFrom('divinux.alerts')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('organizationId', '=', organizationId)
      .where('createdAt', '>=', from)
      .where('createdAt', '<', to)
      .executeTakeFirstOrThrow(),
  ])
  return {
    totals: totals.rows[0]!.stats,
    bySeverity: bySeverity.rows.map((row) => ({ severity: row.key, ...row.stats })),
    byService: byService.rows.map((row) => ({ service: row.key, ...row.stats })),
    perDay: perDay.rows,
    rows: rows.rows,
    alertsReceived: Number(alerts.count),
  }
}
