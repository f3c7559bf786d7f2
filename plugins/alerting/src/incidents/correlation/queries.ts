import { sql, type RawBuilder } from 'kysely'
import { jsonb, jsonColumn, type Executor } from '@svc/db'
import { alertsRelation } from '../../alerts/index.js'
import { deploysRelation } from '../../intake/index.js'
import { serviceEdgeNames } from '../../oncall/index.js'
import { DEFAULT_RULES, REOPEN_MINUTES, type CorrelationRule } from './rules.js'

/** An organization's stored correlation rules, as the validated body wrote them. */
const storedRules = jsonColumn<CorrelationRule[]>()

// Correlation's reads and writes: the rule set and one query per rule kind
// that finds the open incident a new alert belongs to. The incident tables are the alerting
// surface's own, so these live beside the incidents' queries.

export interface NewAlert {
  id: string
  organizationId: string
  service: string | null
  labels: Record<string, string>
  fingerprint: string
  firstSeenAt: Date
}

/** An edge of the organization's dependency map, by lower-case name (the catalog's `dependencyNameEdges`). */
export interface Edge {
  service: string
  dependsOn: string
}

export interface RuleMatch {
  incidentId: string
  /** The alert of the incident that matched. */
  alertId: string
  gapSeconds: number
  matched: Record<string, unknown>
}

export async function ruleSetOf(db: Executor, organizationId: string) {
  const row = await db
    .selectFrom('divinux.incidentRuleSets')
    .select(['rules', 'updatedBy', 'updatedAt'])
    .where('organizationId', '=', organizationId)
    .executeTakeFirst()
  return row
    ? { rules: storedRules(row.rules), defaults: false, updatedBy: row.updatedBy, updatedAt: row.updatedAt }
    : { rules: DEFAULT_RULES, defaults: true, updatedBy: null, updatedAt: null }
}

export async function putRuleSet(trx: Executor, organizationId: string, rules: CorrelationRule[], updatedBy: string) {
  await trx
    .insertInto('divinux.incidentRuleSets')
    .values({ organizationId, rules: jsonb(rules), updatedBy })
    .onConflict((conflict) =>
      conflict.column('organizationId').doUpdateSet({ rules: jsonb(rules), updatedBy, updatedAt: sql<Date>`now()` }),
    )
    .execute()
}

/**
 * One rule's candidate, as a branch of the union `bestMatch` sends: the most recently linked
 * alert `b` of an open incident (link `l`) that satisfies `where`, never the new alert itself,
 * never in an incident that excluded the new alert's fingerprint (it was split out of it). The
 * links carry the service, fingerprint and open flag, so each branch is an index range
 * (incident_alerts_open_service_idx, …) whatever the organization's history. `from` puts
 * relations before the link (the deploy branch's deploy).
 */
function branch(
  order: number,
  alert: NewAlert,
  where: RawBuilder<unknown>,
  extra: RawBuilder<unknown> = sql`null::jsonb`,
  from: RawBuilder<unknown> = sql``,
) {
  return sql`(
    select ${sql.lit(order)}::int as "order", l.incident_id as "incidentId", b.id as "alertId", l.service,
      greatest(0, extract(epoch from (${alert.firstSeenAt}::timestamptz - b.last_seen_at)))::float8 as "gapSeconds",
      ${extra} as extra
    from ${from} divinux.incident_alerts l
    join ${alertsRelation} b on b.id = l.alert_id
    where l.organization_id = ${alert.organizationId} and l.open and l.alert_id <> ${alert.id}
      and not exists (select 1 from divinux.incident_exclusions x where x.incident_id = l.incident_id and x.fingerprint = ${alert.fingerprint})
      and (${where})
    order by l.linked_at desc
    limit 1)`
}

const within = (windowMinutes: number, alert: NewAlert) =>
  sql`b.last_seen_at >= ${alert.firstSeenAt}::timestamptz - make_interval(mins => ${windowMinutes})`

/** A rule's branch and how its row becomes the values it matched on; undefined when it cannot apply to the alert. */
function ruleBranch(order: number, rule: CorrelationRule, alert: NewAlert, edges: Edge[]) {
  switch (rule.kind) {
    case 'fingerprint':
      return { query: branch(order, alert, sql`l.fingerprint = ${alert.fingerprint}`), matched: () => ({ fingerprint: alert.fingerprint }) }
    case 'labels': {
      if (!rule.labels.every((key) => typeof alert.labels[key] === 'string')) return undefined
      const values = Object.fromEntries(rule.labels.map((key) => [key, alert.labels[key]]))
      return {
        query: branch(order, alert, sql`b.labels @> ${JSON.stringify(values)}::jsonb and ${within(rule.windowMinutes, alert)}`),
        matched: () => ({ labels: values }),
      }
    }
    case 'service':
      if (!alert.service) return undefined
      return {
        query: branch(order, alert, sql`l.service = ${alert.service} and ${within(rule.windowMinutes, alert)}`),
        matched: () => ({ service: alert.service }),
      }
    case 'dependency': {
      if (!alert.service) return undefined
      const service = alert.service.toLowerCase()
      const direction = new Map([
        ...edges.filter((edge) => edge.service === service).map((edge) => [edge.dependsOn, 'depends_on'] as const),
        ...edges.filter((edge) => edge.dependsOn === service).map((edge) => [edge.service, 'depended_on_by'] as const),
      ])
      if (direction.size === 0) return undefined
      return {
        query: branch(order, alert, sql`lower(l.service) = any(${[...direction.keys()]}::text[]) and ${within(rule.windowMinutes, alert)}`),
        matched: (row: { service: string | null }) => ({
          service: alert.service,
          relatedService: row.service,
          direction: row.service ? direction.get(row.service.toLowerCase()) : undefined,
        }),
      }
    }
    case 'deploy': {
      if (!alert.service) return undefined
      const service = alert.service.toLowerCase()
      // The latest deploy of the alert's service, or of a service it depends on, in the window
      // before it; then alerts after the same deploy, of the deployed service or of one that
      // depends on it.
      const deploy = sql`(
        select d.id, d.service, d.version, d.deployed_at from ${deploysRelation} d
        where d.organization_id = ${alert.organizationId}
          and lower(d.service) = any(${[service, ...edges.filter((edge) => edge.service === service).map((edge) => edge.dependsOn)]}::text[])
          and d.deployed_at <= ${alert.firstSeenAt}::timestamptz
          and d.deployed_at >= ${alert.firstSeenAt}::timestamptz - make_interval(mins => ${rule.windowMinutes})
        order by d.deployed_at desc limit 1) d cross join`
      return {
        query: branch(
          order,
          alert,
          sql`(l.service = d.service or exists (select 1 from ${serviceEdgeNames} dependent
              where dependent.organization_id = ${alert.organizationId} and dependent.depends_on = lower(d.service) and dependent.service = lower(l.service)))
            and b.first_seen_at >= d.deployed_at and b.first_seen_at <= d.deployed_at + make_interval(mins => ${rule.windowMinutes})`,
          sql`jsonb_build_object('deployId', d.id, 'service', d.service, 'version', d.version,
            'deployedAt', to_char(d.deployed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
          deploy,
        ),
        matched: (row: { extra: Record<string, unknown> | null }) => ({ ...row.extra }),
      }
    }
  }
}

/**
 * The best match of the rules (given by weight, best first) for the alert, in one round trip: a
 * union of each rule's candidate, the first rule's that matched. Correlation runs once per new
 * alert at the ingest rate, so one statement instead of one per rule is most of its cost.
 */
export async function bestMatch(
  db: Executor,
  rules: CorrelationRule[],
  edges: Edge[],
  alert: NewAlert,
): Promise<(RuleMatch & { rule: CorrelationRule }) | undefined> {
  const branches = rules.flatMap((rule, order) => {
    const built = ruleBranch(order, rule, alert, edges)
    return built ? [{ order, rule, ...built }] : []
  })
  if (branches.length === 0) return undefined
  const rows = await sql<{
    order: number
    incidentId: string
    alertId: string
    service: string | null
    gapSeconds: number
    extra: Record<string, unknown> | null
  }>`
    select * from (${sql.join(
      branches.map((built) => built.query),
      sql` union all `,
    )}) candidates order by "order" limit 1`.execute(db)
  const row = rows.rows[0]
  const chosen = row && branches.find((built) => built.order === row.order)
  if (!row || !chosen) return undefined
  return {
    rule: chosen.rule,
    incidentId: row.incidentId,
    alertId: row.alertId,
    gapSeconds: row.gapSeconds,
    matched: chosen.matched(row),
  }
}

/**
 * New alerts of the organization, each with the incident it is in already (if any) and the
 * resolved incident it would reopen: one not merged away, resolved less than REOPEN_MINUTES ago,
 * that had an alert with its fingerprint and did not exclude it. One statement for a whole
 * dispatcher batch: correlation runs at the ingest rate.
 */
export async function newAlertsOf(db: Executor, organizationId: string, alertIds: string[]) {
  if (alertIds.length === 0) return []
  const rows = await sql<{
    id: string
    organizationId: string
    service: string | null
    labels: Record<string, string>
    fingerprint: string
    firstSeenAt: Date
    priority: string
    title: string
    incidentId: string | null
    reopensIncidentId: string | null
    reopensAlertId: string | null
  }>`
    select a.id, a.organization_id as "organizationId", a.service, a.labels, a.fingerprint, a.first_seen_at as "firstSeenAt",
      a.priority, a.title, own.incident_id as "incidentId", resolved.incident_id as "reopensIncidentId", resolved.alert_id as "reopensAlertId"
    from ${alertsRelation} a
    left join divinux.incident_alerts own on own.alert_id = a.id
    left join lateral (
      select l.incident_id, l.alert_id from divinux.incident_alerts l
      join divinux.incidents i on i.id = l.incident_id
      where l.organization_id = a.organization_id and l.fingerprint = a.fingerprint and not l.open and l.alert_id <> a.id
        and i.status = 'resolved' and i.merged_into is null and i.resolved_at > now() - make_interval(mins => ${REOPEN_MINUTES})
        and not exists (select 1 from divinux.incident_exclusions x where x.incident_id = i.id and x.fingerprint = a.fingerprint)
      order by i.resolved_at desc limit 1
    ) resolved on true
    where a.organization_id = ${organizationId} and a.id = any(${alertIds}::uuid[])`.execute(db)
  return rows.rows.map(({ reopensIncidentId, reopensAlertId, ...alert }) => ({
    ...alert,
    reopens: reopensIncidentId && reopensAlertId ? { incidentId: reopensIncidentId, alertId: reopensAlertId } : undefined,
  }))
}

export type NewAlertRow = Awaited<ReturnType<typeof newAlertsOf>>[number]

/** The services of the incident's alerts that none but these alerts have: what they newly bring to it. */
export async function servicesOnlyIn(db: Executor, organizationId: string, incidentId: string, alertIds: string[]): Promise<string[]> {
  if (alertIds.length === 0) return []
  const rows = await sql<{ service: string }>`
    select service from divinux.incident_alerts
    where organization_id = ${organizationId} and incident_id = ${incidentId} and service is not null
    group by service
    having bool_and(alert_id in (${sql.join(alertIds)}))
    order by service`.execute(db)
  return rows.rows.map((row) => row.service)
}
