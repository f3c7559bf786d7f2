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
 * One rule's candidate for each alert of a batch, as a branch of the union `bestMatches` sends:
 * the most recently linked alert `b` of an open incident (link `l`) that satisfies `where`, never
 * the new alert `v` itself, never in an incident that excluded the new alert's fingerprint (it was
 * split out of it). The links carry the service, fingerprint and open flag, so each branch is an
 * index range (incident_alerts_open_service_idx, …) whatever the organization's history.
 */
function branch(order: number, where: RawBuilder<unknown>, extra: RawBuilder<unknown> = sql`null::jsonb`) {
  return sql`(
    select ${sql.lit(order)}::int as "order", l.incident_id as "incidentId", b.id as "alertId", l.service,
      greatest(0, extract(epoch from (v.first_seen_at - b.last_seen_at)))::float8 as "gapSeconds",
      ${extra} as extra, l.linked_at as "linkedAt"
    from divinux.incident_alerts l
    join ${alertsRelation} b on b.id = l.alert_id
    where l.organization_id = v.organization_id and l.open and l.alert_id <> v.id
      and not exists (select 1 from divinux.incident_exclusions x where x.incident_id = l.incident_id and x.fingerprint = v.fingerprint)
      and (${where})
    order by l.linked_at desc
    limit 1)`
}

const within = (windowMinutes: number) => sql`b.last_seen_at >= v.first_seen_at - make_interval(mins => ${sql.lit(windowMinutes)})`

/** The column of the batch's record that carries a rule's argument for each alert (null where the rule cannot apply to it). */
const argument = (order: number) => sql.ref(`v.p${order}`)

/**
 * A rule: its branch (the same text for every alert), the SQL type of its argument, and for one
 * alert that argument (null when the rule cannot apply to the alert) and how a candidate row
 * becomes the values it matched on.
 */
interface RuleQuery {
  query: RawBuilder<unknown>
  argumentType?: 'jsonb' | 'text[]'
  of(alert: NewAlert): { argument: unknown; matched(row: CandidateRow): Record<string, unknown> } | undefined
}

interface CandidateRow {
  order: number
  incidentId: string
  alertId: string
  service: string | null
  gapSeconds: number
  extra: Record<string, unknown> | null
  linkedAt: Date
}

/** The lower-case names of the services the alert's service depends on, and of those that depend on it, each with its direction. */
function directionsOf(service: string, edges: Edge[]) {
  return new Map([
    ...edges.filter((edge) => edge.service === service).map((edge) => [edge.dependsOn, 'depends_on'] as const),
    ...edges.filter((edge) => edge.dependsOn === service).map((edge) => [edge.service, 'depended_on_by'] as const),
  ])
}

function ruleQuery(order: number, rule: CorrelationRule, edges: Edge[]): RuleQuery {
  switch (rule.kind) {
    case 'fingerprint':
      return {
        query: branch(order, sql`l.fingerprint = v.fingerprint`),
        of: (alert) => ({ argument: null, matched: () => ({ fingerprint: alert.fingerprint }) }),
      }
    case 'labels':
      return {
        query: branch(order, sql`${argument(order)} is not null and b.labels @> ${argument(order)} and ${within(rule.windowMinutes)}`),
        argumentType: 'jsonb',
        of(alert) {
          if (!rule.labels.every((key) => typeof alert.labels[key] === 'string')) return undefined
          const values = Object.fromEntries(rule.labels.map((key) => [key, alert.labels[key]]))
          return { argument: values, matched: () => ({ labels: values }) }
        },
      }
    case 'service':
      return {
        query: branch(order, sql`l.service = v.service and ${within(rule.windowMinutes)}`),
        of: (alert) => (alert.service ? { argument: null, matched: () => ({ service: alert.service }) } : undefined),
      }
    case 'dependency':
      return {
        // Each related service's latest link by itself, then the latest of those: each is the
        // head of an index range (incident_alerts_open_lower_service_idx), where one range over
        // all of them would be every link of those services, sorted.
        query: sql`(
          select candidate.* from unnest(${argument(order)}) related(name)
          cross join lateral ${branch(order, sql`lower(l.service) = related.name and ${within(rule.windowMinutes)}`)} candidate
          order by candidate."linkedAt" desc
          limit 1)`,
        argumentType: 'text[]',
        of(alert) {
          if (!alert.service) return undefined
          const direction = directionsOf(alert.service.toLowerCase(), edges)
          if (direction.size === 0) return undefined
          return {
            argument: [...direction.keys()],
            matched: (row) => ({
              service: alert.service,
              relatedService: row.service,
              direction: row.service ? direction.get(row.service.toLowerCase()) : undefined,
            }),
          }
        },
      }
    case 'deploy': {
      // The latest deploy of the alert's service, or of a service it depends on (the argument), in
      // the window before it; then alerts after the same deploy, of the deployed service or of one
      // that depends on it. The deploy is found first and the links are looked at only when there
      // is one: most alerts follow no deploy, and an organization's open links in a storm are
      // thousands.
      const deploy = sql`(
        select d.id, d.service, d.version, d.deployed_at from ${deploysRelation} d
        where d.organization_id = v.organization_id
          and lower(d.service) = any(${argument(order)})
          and d.deployed_at <= v.first_seen_at
          and d.deployed_at >= v.first_seen_at - make_interval(mins => ${sql.lit(rule.windowMinutes)})
        order by d.deployed_at desc limit 1)`
      const afterDeploy = branch(
        order,
        sql`(l.service = d.service or exists (select 1 from ${serviceEdgeNames} dependent
            where dependent.organization_id = v.organization_id and dependent.depends_on = lower(d.service) and dependent.service = lower(l.service)))
          and b.first_seen_at >= d.deployed_at and b.first_seen_at <= d.deployed_at + make_interval(mins => ${sql.lit(rule.windowMinutes)})`,
        sql`jsonb_build_object('deployId', d.id, 'service', d.service, 'version', d.version,
          'deployedAt', to_char(d.deployed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
      )
      return {
        query: sql`(select candidate.* from ${deploy} d cross join lateral ${afterDeploy} candidate)`,
        argumentType: 'text[]',
        of(alert) {
          if (!alert.service) return undefined
          const service = alert.service.toLowerCase()
          const deployed = [service, ...edges.filter((edge) => edge.service === service).map((edge) => edge.dependsOn)]
          return { argument: deployed, matched: (row) => ({ ...row.extra }) }
        },
      }
    }
  }
}

export type Match = RuleMatch & { rule: CorrelationRule }

/**
 * The best match of the rules (given by weight, best first) for each of an organization's new
 * alerts, in one round trip: for each alert, a union of each rule's candidate, the first rule's
 * that matched. Correlation runs at the ingest rate, and a statement per alert spent most of its
 * time being planned (1–12 ms each in a storm, against about 1 ms executing), so a dispatcher
 * batch is one statement. Alerts with no match are absent from the answer.
 */
export async function bestMatches(db: Executor, rules: CorrelationRule[], edges: Edge[], alerts: NewAlert[]): Promise<Map<string, Match>> {
  const queries = rules.map((rule, order) => ({ order, rule, ...ruleQuery(order, rule, edges) }))
  const records = alerts.map((alert) => ({
    alert,
    applying: queries.map((query) => query.of(alert)),
  }))
  const matching = records.filter((record) => record.applying.some(Boolean))
  if (matching.length === 0) return new Map()
  const columns = [
    sql`id uuid, organization_id uuid, fingerprint text, service text, first_seen_at timestamptz`,
    ...queries.flatMap((query) => (query.argumentType ? [sql`${sql.raw(`p${query.order}`)} ${sql.raw(query.argumentType)}`] : [])),
  ]
  // A rule that cannot apply to an alert gets no candidate for it: its argument is null, or (rules
  // without one) the alert's own columns cannot match (a service rule for an alert of no service).
  const values = matching.map(({ alert, applying }) => ({
    id: alert.id,
    organization_id: alert.organizationId,
    fingerprint: alert.fingerprint,
    service: alert.service,
    first_seen_at: alert.firstSeenAt,
    ...Object.fromEntries(
      queries.flatMap((query) => (query.argumentType ? [[`p${query.order}`, applying[query.order]?.argument ?? null]] : [])),
    ),
  }))
  const rows = await sql<CandidateRow & { forAlertId: string }>`
    select v.id as "forAlertId", c.*
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb) as v(${sql.join(columns)})
    cross join lateral (
      select * from (${sql.join(
        queries.map((query) => query.query),
        sql` union all `,
      )}) candidates order by "order" limit 1
    ) c`.execute(db)
  const byAlert = new Map(matching.map((record) => [record.alert.id, record]))
  const matches = new Map<string, Match>()
  for (const row of rows.rows) {
    const applying = byAlert.get(row.forAlertId)?.applying[row.order]
    const query = queries[row.order]
    if (!applying || !query) continue
    const { incidentId, alertId, gapSeconds } = row
    matches.set(row.forAlertId, { rule: query.rule, incidentId, alertId, gapSeconds, matched: applying.matched(row) })
  }
  return matches
}

/**
 * Whether an alert just placed as the first of a new (or reopened) incident could be what a rule
 * matches for `alert`, windows aside: when not, the incident changes nothing of the alert's best
 * match and the batch's answer for it stands (correlate.ts).
 */
export function couldMatch(rules: CorrelationRule[], edges: Edge[], alert: NewAlert, placed: NewAlert): boolean {
  const service = alert.service?.toLowerCase()
  const placedService = placed.service?.toLowerCase()
  return rules.some((rule) => {
    switch (rule.kind) {
      case 'fingerprint':
        return placed.fingerprint === alert.fingerprint
      case 'labels':
        return rule.labels.every((key) => typeof alert.labels[key] === 'string' && placed.labels[key] === alert.labels[key])
      case 'service':
        return alert.service !== null && placed.service === alert.service
      case 'dependency':
        return service !== undefined && placedService !== undefined && directionsOf(service, edges).has(placedService)
      case 'deploy': {
        if (service === undefined || placedService === undefined) return false
        const deployed = new Set([service, ...edges.filter((edge) => edge.service === service).map((edge) => edge.dependsOn)])
        return deployed.has(placedService) || edges.some((edge) => edge.service === placedService && deployed.has(edge.dependsOn))
      }
    }
  })
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

/**
 * For each open incident of the organization that the alerts just linked joined, the services
 * none of its other alerts have: what they newly bring to it. Each is looked up among the open
 * links of its service (incident_alerts_open_service_idx), so a storm's incident of thousands of
 * alerts costs what a small one does.
 */
export async function servicesNewTo(db: Executor, organizationId: string, alertIds: string[]): Promise<Map<string, string[]>> {
  const services = new Map<string, string[]>()
  if (alertIds.length === 0) return services
  const rows = await sql<{ incidentId: string; service: string }>`
    select distinct l.incident_id as "incidentId", l.service from divinux.incident_alerts l
    where l.organization_id = ${organizationId} and l.alert_id = any(${alertIds}::uuid[]) and l.open and l.service is not null
      and not exists (
        select 1 from divinux.incident_alerts other
        where other.organization_id = l.organization_id and other.open and other.service = l.service
          and other.incident_id = l.incident_id and other.alert_id <> all(${alertIds}::uuid[]))
    order by 1, 2`.execute(db)
  for (const { incidentId, service } of rows.rows) services.set(incidentId, [...(services.get(incidentId) ?? []), service])
  return services
}
