import { sql, type RawBuilder } from 'kysely'
import { jsonb, type Executor } from '@svc/db'
import { DEFAULT_RULES, REOPEN_MINUTES, type CorrelationRule } from './rules.js'

// Correlation's reads and writes: the rule set, the dependency map, and one query per rule kind
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
    ? { rules: row.rules as unknown as CorrelationRule[], defaults: false, updatedBy: row.updatedBy, updatedAt: row.updatedAt }
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

/** The services a service depends on and those that depend on it, in both directions, one step. */
const neighboursOf = (organizationId: string, service: string) => sql`
  select depends_on as service, 'depends_on' as direction from divinux.service_dependencies
    where organization_id = ${organizationId} and service = ${service}
  union
  select service, 'depended_on_by' from divinux.service_dependencies
    where organization_id = ${organizationId} and depends_on = ${service}`

/**
 * The most recently linked alert `b` of an open incident (link `l`) that satisfies `where`:
 * never the new alert itself, never in an incident that excluded the new alert's fingerprint (it
 * was split out of it). The links carry the service, fingerprint and open flag, so each rule is
 * an index range (incident_alerts_open_service_idx, …) whatever the organization's history.
 */
const candidates = (alert: NewAlert, where: RawBuilder<unknown>, extraColumns: RawBuilder<unknown> = sql`null::jsonb`) => sql<{
  incidentId: string
  alertId: string
  gapSeconds: number
  extra: Record<string, unknown> | null
}>`
  select l.incident_id as "incidentId", b.id as "alertId",
    greatest(0, extract(epoch from (${alert.firstSeenAt}::timestamptz - b.last_seen_at)))::float8 as "gapSeconds",
    ${extraColumns} as extra
  from divinux.incident_alerts l
  join divinux.alerts b on b.id = l.alert_id
  where l.organization_id = ${alert.organizationId} and l.open and l.alert_id <> ${alert.id}
    and not exists (select 1 from divinux.incident_exclusions x where x.incident_id = l.incident_id and x.fingerprint = ${alert.fingerprint})
    and (${where})
  order by l.linked_at desc
  limit 1`

const within = (windowMinutes: number, alert: NewAlert) =>
  sql`b.last_seen_at >= ${alert.firstSeenAt}::timestamptz - make_interval(mins => ${windowMinutes})`

/** The open incident the rule puts the alert in, if any, with the values it matched on. */
export async function matchRule(db: Executor, rule: CorrelationRule, alert: NewAlert): Promise<RuleMatch | undefined> {
  const first = async (
    query: ReturnType<typeof candidates>,
    matched: (extra: Record<string, unknown> | null) => Record<string, unknown>,
  ) => {
    const row = (await query.execute(db)).rows[0]
    return row ? { incidentId: row.incidentId, alertId: row.alertId, gapSeconds: row.gapSeconds, matched: matched(row.extra) } : undefined
  }
  switch (rule.kind) {
    case 'fingerprint':
      return first(candidates(alert, sql`l.fingerprint = ${alert.fingerprint}`), () => ({ fingerprint: alert.fingerprint }))
    case 'labels': {
      if (!rule.labels.every((key) => typeof alert.labels[key] === 'string')) return undefined
      const values = Object.fromEntries(rule.labels.map((key) => [key, alert.labels[key]]))
      return first(candidates(alert, sql`b.labels @> ${JSON.stringify(values)}::jsonb and ${within(rule.windowMinutes, alert)}`), () => ({
        labels: values,
      }))
    }
    case 'service':
      if (!alert.service) return undefined
      return first(candidates(alert, sql`l.service = ${alert.service} and ${within(rule.windowMinutes, alert)}`), () => ({
        service: alert.service,
      }))
    case 'dependency': {
      if (!alert.service) return undefined
      const neighbours = neighboursOf(alert.organizationId, alert.service)
      return first(
        candidates(
          alert,
          sql`l.service in (select service from (${neighbours}) n) and ${within(rule.windowMinutes, alert)}`,
          sql`jsonb_build_object('relatedService', b.service, 'direction', (select direction from (${neighbours}) n where n.service = b.service limit 1))`,
        ),
        (extra) => ({ service: alert.service, ...extra }),
      )
    }
    case 'deploy': {
      if (!alert.service) return undefined
      const deploy = await deployBefore(db, alert, rule.windowMinutes)
      if (!deploy) return undefined
      // Alerts after the same deploy: of the deployed service, or of a service that depends on it.
      const affected = sql`select ${deploy.service}::text as service union select service from divinux.service_dependencies
        where organization_id = ${alert.organizationId} and depends_on = ${deploy.service}`
      return first(
        candidates(
          alert,
          sql`l.service in (${affected}) and b.first_seen_at >= ${deploy.deployedAt}::timestamptz
            and b.first_seen_at <= ${deploy.deployedAt}::timestamptz + make_interval(mins => ${rule.windowMinutes})`,
        ),
        () => ({ deployId: deploy.id, service: deploy.service, version: deploy.version, deployedAt: deploy.deployedAt.toISOString() }),
      )
    }
  }
}

/** The latest deploy of the alert's service, or of a service it depends on, in the window before it. */
async function deployBefore(db: Executor, alert: NewAlert, windowMinutes: number) {
  const rows = await sql<{ id: string; service: string; version: string | null; deployedAt: Date }>`
    select d.id, d.service, d.version, d.deployed_at as "deployedAt" from divinux.deploy_events d
    where d.organization_id = ${alert.organizationId}
      and (d.service = ${alert.service} or d.service in (select depends_on from divinux.service_dependencies
        where organization_id = ${alert.organizationId} and service = ${alert.service}))
      and d.deployed_at <= ${alert.firstSeenAt}::timestamptz
      and d.deployed_at >= ${alert.firstSeenAt}::timestamptz - make_interval(mins => ${windowMinutes})
    order by d.deployed_at desc limit 1`.execute(db)
  return rows.rows[0]
}

/**
 * A resolved incident (not merged away) that had an alert with this fingerprint and was resolved
 * within REOPEN_MINUTES: the new alert reopens it.
 */
export async function recentlyResolvedWith(db: Executor, alert: NewAlert): Promise<{ incidentId: string; alertId: string } | undefined> {
  const rows = await sql<{ incidentId: string; alertId: string }>`
    select i.id as "incidentId", l.alert_id as "alertId" from divinux.incident_alerts l
    join divinux.incidents i on i.id = l.incident_id
    where l.organization_id = ${alert.organizationId} and l.fingerprint = ${alert.fingerprint} and not l.open and l.alert_id <> ${alert.id}
      and i.status = 'resolved' and i.merged_into is null and i.resolved_at > now() - make_interval(mins => ${REOPEN_MINUTES})
      and not exists (select 1 from divinux.incident_exclusions x where x.incident_id = i.id and x.fingerprint = ${alert.fingerprint})
    order by i.resolved_at desc limit 1`.execute(db)
  return rows.rows[0]
}

export async function newAlertOf(db: Executor, organizationId: string, alertId: string) {
  const row = await db
    .selectFrom('divinux.alerts as a')
    .leftJoin('divinux.incidentAlerts as l', 'l.alertId', 'a.id')
    .select([
      'a.id',
      'a.organizationId',
      'a.service',
      'a.labels',
      'a.fingerprint',
      'a.firstSeenAt',
      'a.priority',
      'a.title',
      'l.incidentId',
    ])
    .where('a.organizationId', '=', organizationId)
    .where('a.id', '=', alertId)
    .executeTakeFirst()
  return row ? { ...row, labels: row.labels as Record<string, string> } : undefined
}

// The service dependency map.

export async function listDependencies(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.serviceDependencies')
    .select(['id', 'service', 'dependsOn', 'createdBy', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .orderBy('service')
    .orderBy('dependsOn')
    .execute()
}

export async function insertDependency(trx: Executor, organizationId: string, service: string, dependsOn: string, createdBy: string) {
  return trx
    .insertInto('divinux.serviceDependencies')
    .values({ organizationId, service, dependsOn, createdBy })
    .onConflict((conflict) => conflict.columns(['organizationId', 'service', 'dependsOn']).doNothing())
    .returning(['id', 'service', 'dependsOn', 'createdBy', 'createdAt'])
    .executeTakeFirst()
}

export async function deleteDependency(trx: Executor, organizationId: string, id: string) {
  return trx
    .deleteFrom('divinux.serviceDependencies')
    .where('organizationId', '=', organizationId)
    .where('id', '=', id)
    .returning(['service', 'dependsOn'])
    .executeTakeFirst()
}

export const DEPENDENCIES_PER_ORGANIZATION = 2_000

export async function countDependencies(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('divinux.serviceDependencies')
    .select(sql<number>`count(*)::int`.as('count'))
    .where('organizationId', '=', organizationId)
    .executeTakeFirstOrThrow()
  return row.count
}
