import { sql } from 'kysely'
import { jsonb, lockUntilCommit, paged, type Executor, type Page } from '@svc/db'
import { type AlertMove, alertsEscalating, alertsRelation, moveAlerts, repageAcknowledgedAt } from '../alerts/index.js'
import { ackTimeoutFromNow } from '../oncall/index.js'
import type { IncidentStatus, Severity } from './model.js'

// The incident tables are the alerting surface's (scripts/test/surface-tables.test.ts); every
// query is scoped by organization in its own WHERE.

const incidentColumns = [
  'i.id',
  'i.number',
  'i.title',
  'i.summary',
  'i.severity',
  'i.status',
  'i.openedBy',
  'i.declaredBy',
  'i.startedAt',
  'i.detectedAt',
  'i.acknowledgedAt',
  'i.mitigatedAt',
  'i.resolvedAt',
  'i.mergedInto',
  'i.snoozedUntil',
  'i.typeId',
  'i.fields',
  'i.createdAt',
  'i.updatedAt',
] as const

/** The organization's incidents, aliased `i`, before any column is chosen. */
function incidentTable(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.incidents as i').where('i.organizationId', '=', organizationId)
}

/** An incident's columns and how many alerts it has. */
function withIncidentColumns(query: ReturnType<typeof incidentTable>) {
  return query.select([
    ...incidentColumns,
    (eb) =>
      eb
        .selectFrom('divinux.incidentAlerts as l')
        .select(sql<number>`count(*)::int`.as('count'))
        .whereRef('l.incidentId', '=', 'i.id')
        .as('alertCount'),
    (eb) => eb.selectFrom('divinux.incidentTypes as t').select('t.key').whereRef('t.id', '=', 'i.typeId').as('typeKey'),
  ])
}

const incidentsOf = (db: Executor, organizationId: string) => withIncidentColumns(incidentTable(db, organizationId))

export type IncidentRow = NonNullable<Awaited<ReturnType<typeof findIncident>>>

export async function findIncident(db: Executor, organizationId: string, incidentId: string, forUpdate = false) {
  const query = incidentsOf(db, organizationId).where('i.id', '=', incidentId)
  return forUpdate ? query.forUpdate('i').executeTakeFirst() : query.executeTakeFirst()
}

/** What the incident list keeps: a status (`open`: every one but resolved), a type, and field values each incident holds. */
export interface IncidentFilter {
  status?: IncidentStatus | 'open'
  /** A type's id; null: incidents of no type. */
  typeId?: string | null
  /** Severity keys, any of them. */
  severities?: string[]
  /** Documents each incident's `fields` contains (a value, or a multi-select's option in a list). */
  fields?: Array<Record<string, unknown>>
}

/** Newest first. */
export async function listIncidents(db: Executor, organizationId: string, filter: IncidentFilter, page: Page) {
  let base = incidentTable(db, organizationId)
  const { status, typeId, severities, fields = [] } = filter
  if (severities) base = base.where('i.severity', 'in', severities)
  if (status === 'open') base = base.where('i.status', '<>', 'resolved')
  else if (status) base = base.where('i.status', '=', status)
  if (typeId === null) base = base.where('i.typeId', 'is', null)
  else if (typeId) base = base.where('i.typeId', '=', typeId)
  // Containment through the fields' GIN index (jsonb_path_ops).
  for (const document of fields) base = base.where(sql<boolean>`i.fields @> ${jsonb(document)}`)
  return paged(base, (rows) => withIncidentColumns(rows).orderBy('i.createdAt', 'desc').orderBy('i.id', 'desc'), page)
}

export interface NewIncident {
  organizationId: string
  title: string
  summary: string | null
  severity: Severity
  openedBy: 'person' | 'alert'
  declaredBy: string | null
  startedAt: Date
  detectedAt: Date
  typeId?: string | null
  fields?: Record<string, unknown>
}

/** Inserts an incident with the organization's next number (taken under a lock held to commit). */
export async function insertIncident(trx: Executor, incident: NewIncident): Promise<string> {
  await lockUntilCommit(trx, `incident-number:${incident.organizationId}`)
  const { next } = await trx
    .selectFrom('divinux.incidents')
    .select(sql<number>`coalesce(max(number), 0)::int + 1`.as('next'))
    .where('organizationId', '=', incident.organizationId)
    .executeTakeFirstOrThrow()
  const { id } = await trx
    .insertInto('divinux.incidents')
    .values({ ...incident, fields: jsonb(incident.fields ?? {}), number: next })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

export interface IncidentChange {
  title?: string
  summary?: string | null
  severity?: Severity
  status?: IncidentStatus
  acknowledgedAt?: Date | null
  mitigatedAt?: Date | null
  resolvedAt?: Date | null
  snoozedUntil?: Date | null
  typeId?: string | null
  fields?: Record<string, unknown>
}

export async function updateIncident(trx: Executor, organizationId: string, incidentId: string, change: IncidentChange): Promise<void> {
  const { fields, ...rest } = change
  await trx
    .updateTable('divinux.incidents')
    .set({ ...rest, ...(fields === undefined ? {} : { fields: jsonb(fields) }), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', incidentId)
    .execute()
  if (change.status !== undefined) await syncLinksOpen(trx, organizationId, incidentId)
}

export async function incidentRoles(db: Executor, organizationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentRoles as r')
    .innerJoin('core.users as u', 'u.id', 'r.userId')
    .select(['r.role', 'r.userId', 'u.email', 'r.assignedBy', 'r.assignedAt'])
    .where('r.organizationId', '=', organizationId)
    .where('r.incidentId', '=', incidentId)
    .orderBy('r.role')
    .execute()
}

export type IncidentRoleRow = Awaited<ReturnType<typeof incidentRoles>>[number]

/** Gives a role to a person, replacing whoever held it; answers who held it before. */
export async function assignRole(
  trx: Executor,
  organizationId: string,
  incidentId: string,
  role: string,
  userId: string,
  assignedBy: string | null,
): Promise<string | undefined> {
  const before = await trx
    .selectFrom('divinux.incidentRoles')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .where('role', '=', role)
    .executeTakeFirst()
  await trx
    .insertInto('divinux.incidentRoles')
    .values({ organizationId, incidentId, role, userId, assignedBy })
    .onConflict((conflict) => conflict.columns(['incidentId', 'role']).doUpdateSet({ userId, assignedBy, assignedAt: sql<Date>`now()` }))
    .execute()
  return before?.userId
}

/** Answers who held the role, or undefined when nobody did. */
export async function removeRole(trx: Executor, organizationId: string, incidentId: string, role: string) {
  const removed = await trx
    .deleteFrom('divinux.incidentRoles')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .where('role', '=', role)
    .returning('userId')
    .executeTakeFirst()
  return removed?.userId
}

/** The given alerts of the organization, with the incident each is in (if any). */
export async function alertsWithIncident(db: Executor, organizationId: string, alertIds: string[]) {
  if (alertIds.length === 0) return []
  return db
    .selectFrom(alertsRelation.as('a'))
    .leftJoin('divinux.incidentAlerts as l', 'l.alertId', 'a.id')
    .select(['a.id', 'a.priority', 'a.title', 'a.service', 'a.firstSeenAt', 'l.incidentId'])
    .where('a.organizationId', '=', organizationId)
    .where('a.id', 'in', alertIds)
    .execute()
}

export interface AlertLink {
  alertId: string
  rule: string
  score: number
  matched: Record<string, unknown>
  linkedBy: string | null
}

/**
 * The alerts linked to an incident by one rule, oldest first, with their state and who
 * acknowledged each (a responder request's alert and whom it reached).
 */
export async function alertsLinkedByRule(
  db: Executor,
  organizationId: string,
  incidentId: string,
  rule: string,
  options: { unresolvedOnly?: boolean; limit?: number } = {},
) {
  let query = db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin(alertsRelation.as('a'), 'a.id', 'l.alertId')
    .leftJoin('core.users as u', 'u.id', 'a.acknowledgedBy')
    .select(['l.alertId', 'l.matched', 'l.linkedAt', 'a.description', 'a.status', 'a.acknowledgedBy', 'u.email', 'a.acknowledgedAt'])
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('l.rule', '=', rule)
    .orderBy('l.linkedAt')
  if (options.unresolvedOnly) query = query.where('a.status', '<>', 'resolved')
  if (options.limit !== undefined) query = query.limit(options.limit)
  return query.execute()
}

/**
 * How many links of one rule the organization made in the last `windowMinutes`, per target their
 * `matched.target` names, for the targets whose ids are given (a rate on responder requests).
 */
export async function recentLinksPerTarget(db: Executor, organizationId: string, rule: string, windowMinutes: number, targetIds: string[]) {
  return db
    .selectFrom('divinux.incidentAlerts')
    .select((eb) => [
      sql<string>`matched -> 'target' ->> 'type'`.as('type'),
      sql<string>`matched -> 'target' ->> 'id'`.as('id'),
      eb.fn.countAll<number>().as('count'),
    ])
    .where('organizationId', '=', organizationId)
    .where('rule', '=', rule)
    .where('linkedAt', '>', sql<Date>`now() - make_interval(mins => ${windowMinutes})`)
    .where(sql<string>`matched -> 'target' ->> 'id'`, 'in', targetIds)
    .groupBy([sql`matched -> 'target' ->> 'type'`, sql`matched -> 'target' ->> 'id'`])
    .execute()
}

/**
 * Links alerts of the organization that are in no incident; answers the ids it linked (one
 * already linked is left where it is). The link copies what correlation looks up by (the alert's
 * service and fingerprint, whether the incident is open) and takes the time of the link itself,
 * not of its transaction's start (a dispatcher batch is one transaction).
 */
export async function linkAlerts(trx: Executor, organizationId: string, incidentId: string, links: AlertLink[]): Promise<string[]> {
  const linked = await linkAlertsToIncidents(
    trx,
    organizationId,
    links.map((link) => ({ ...link, incidentId })),
  )
  return linked.map((row) => row.alertId)
}

/** `linkAlerts` for links to several incidents of the organization, in one statement: answers each link it made. */
export async function linkAlertsToIncidents(
  trx: Executor,
  organizationId: string,
  links: Array<AlertLink & { incidentId: string }>,
): Promise<Array<{ alertId: string; incidentId: string }>> {
  if (links.length === 0) return []
  const records = links.map((link) => ({
    alert_id: link.alertId,
    incident_id: link.incidentId,
    rule: link.rule,
    score: link.score,
    matched: link.matched,
    linked_by: link.linkedBy,
  }))
  // The planner takes a recordset for 100 rows: the `= any` lists let it read the joined rows by
  // key where it would otherwise hash a scan of either table (each statement like this one does).
  const rows = await sql<{ alertId: string; incidentId: string }>`
    insert into divinux.incident_alerts (alert_id, incident_id, organization_id, rule, score, matched, linked_by, linked_at, service, fingerprint, open)
    select a.id, i.id, a.organization_id, v.rule, v.score, v.matched, v.linked_by, clock_timestamp(), a.service, a.fingerprint, i.status <> 'resolved'
    from jsonb_to_recordset(${JSON.stringify(records)}::jsonb)
      as v(alert_id uuid, incident_id uuid, rule text, score real, matched jsonb, linked_by uuid)
    join ${alertsRelation} a on a.id = v.alert_id and a.organization_id = ${organizationId}
      and a.id = any(${links.map((link) => link.alertId)}::uuid[])
    join divinux.incidents i on i.id = v.incident_id and i.organization_id = ${organizationId}
      and i.id = any(${[...new Set(links.map((link) => link.incidentId))]}::uuid[])
    on conflict (alert_id) do nothing
    returning alert_id as "alertId", incident_id as "incidentId"`.execute(trx)
  return rows.rows
}

/**
 * Locks the organization's incidents' rows, in the order of their ids: writers of several
 * incidents at once (a correlation batch) then never wait on each other in a cycle.
 */
export async function lockIncidents(trx: Executor, organizationId: string, incidentIds: string[]): Promise<void> {
  if (incidentIds.length === 0) return
  await sql`select id from divinux.incidents where organization_id = ${organizationId} and id = any(${incidentIds}::uuid[]) order by id for update`.execute(
    trx,
  )
}

/** Keeps the links' `open` with their incident's status (correlation looks only at open ones). */
async function syncLinksOpen(trx: Executor, organizationId: string, incidentId: string): Promise<void> {
  await sql`
    update divinux.incident_alerts l set open = i.status <> 'resolved'
    from divinux.incidents i
    where i.id = l.incident_id and l.incident_id = ${incidentId} and l.organization_id = ${organizationId}
      and l.open is distinct from (i.status <> 'resolved')`.execute(trx)
}

const linkColumns = [
  'l.alertId',
  'a.title',
  'a.priority',
  'a.status',
  'a.service',
  'l.rule',
  'l.score',
  'l.matched',
  'l.linkedBy',
  'l.linkedAt',
] as const

function linksOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin(alertsRelation.as('a'), 'a.id', 'l.alertId')
    .where('l.organizationId', '=', organizationId)
}

/** The incident's alerts in the order they joined it. */
export async function listIncidentAlerts(db: Executor, organizationId: string, incidentId: string, page: Page) {
  return paged(
    linksOf(db, organizationId).where('l.incidentId', '=', incidentId),
    (rows) => rows.select(linkColumns).orderBy('l.linkedAt').orderBy('l.alertId'),
    page,
  )
}

export async function findIncidentAlert(db: Executor, organizationId: string, incidentId: string, alertId: string) {
  return linksOf(db, organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('l.alertId', '=', alertId)
    .select(linkColumns)
    .executeTakeFirst()
}

export type IncidentAlertRow = NonNullable<Awaited<ReturnType<typeof findIncidentAlert>>>

/** The incident an alert is in, with why. */
export async function incidentOfAlert(db: Executor, organizationId: string, alertId: string) {
  return incidentLinks(db, organizationId).where('l.alertId', '=', alertId).executeTakeFirst()
}

/** `incidentOfAlert` for many alerts in one statement (a batch of pages or chat posts): alert id → its incident. */
export async function incidentsOfAlerts(db: Executor, organizationId: string, alertIds: string[]): Promise<Map<string, LinkedIncident>> {
  if (alertIds.length === 0) return new Map()
  const rows = await incidentLinks(db, organizationId).select('l.alertId').where('l.alertId', 'in', alertIds).execute()
  return new Map(rows.map(({ alertId, ...incident }) => [alertId, incident]))
}

export type LinkedIncident = NonNullable<Awaited<ReturnType<typeof incidentOfAlert>>>

/** The organization's alerts' incident links, with what is said of their incidents. */
function incidentLinks(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['i.id', 'i.number', 'i.title', 'i.status', 'i.severity', 'l.rule', 'l.score', 'l.matched', 'l.linkedAt'])
    .where('l.organizationId', '=', organizationId)
}

/**
 * What paging an alert again needs of its incident: the incident (if open) and whether another
 * of its alerts is escalating now (then this one need page no one).
 */
export async function repageContextOf(db: Executor, organizationId: string, alertId: string) {
  const incident = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['i.id', 'i.number', 'i.status', 'i.snoozedUntil'])
    .where('l.organizationId', '=', organizationId)
    .where('l.alertId', '=', alertId)
    .where('i.status', '<>', 'resolved')
    .executeTakeFirst()
  if (!incident) return undefined
  const escalating = await alertIdsOfIncident(db, organizationId, incident.id)
    .where('l.alertId', '<>', alertId)
    .where('l.rule', '<>', 'responder_request')
    .where('l.alertId', 'in', alertsEscalating(db))
    .limit(1)
    .executeTakeFirst()
  return { ...incident, escalatingAlertId: escalating?.alertId }
}

/** Pages the incident's acknowledged alerts again at `until` (their acknowledgement's re-page time); answers how many. */
export async function snoozeIncidentAlerts(trx: Executor, organizationId: string, incidentId: string, until: Date): Promise<number> {
  return repageAcknowledgedAt(trx, organizationId, alertIdsOfIncident(trx, organizationId, incidentId), until)
}

export interface NewTimelineRow {
  organizationId: string
  incidentId: string
  kind: string
  body: string | null
  data: Record<string, unknown>
  authorId: string | null
}

/**
 * Writes timeline entries and marks their incidents changed (updated_at): every change of an
 * incident writes one, and chat follows incidents whose updated_at moved past what it showed.
 */
/** The timeline's kinds that are changes workflows may act on (change-bus.ts): written undispatched. */
export const CHANGE_KINDS: ReadonlySet<string> = new Set([
  'opened',
  'declared',
  'status_changed',
  'severity_changed',
  'field_changed',
  'role_assigned',
])

export async function addTimeline(trx: Executor, entries: NewTimelineRow[]) {
  if (entries.length === 0) return []
  const rows = await trx
    .insertInto('divinux.incidentTimeline')
    .values(
      entries.map((entry) => ({ ...entry, data: jsonb(entry.data), ...(CHANGE_KINDS.has(entry.kind) ? { dispatchedAt: null } : {}) })),
    )
    .returning(['id', 'kind', 'body', 'data', 'authorId', 'createdAt'])
    .execute()
  await trx
    .updateTable('divinux.incidents')
    .set({ updatedAt: sql<Date>`now()` })
    .where('id', 'in', [...new Set(entries.map((entry) => entry.incidentId))])
    .where('organizationId', 'in', [...new Set(entries.map((entry) => entry.organizationId))])
    .execute()
  return rows
}

/**
 * The incident's responders, first first: those who joined (via `api` or `chat`) and those who
 * acknowledged a responder request (via `request`), each once.
 */
export async function incidentResponders(db: Executor, organizationId: string, incidentId: string) {
  const rows = await sql<{ userId: string; email: string; via: string; addedBy: string | null; addedAt: Date }>`
    select distinct on (user_id) user_id as "userId", email, via, added_by as "addedBy", added_at as "addedAt" from (
      select r.user_id, u.email, r.via, r.added_by, r.added_at
      from divinux.incident_responders r join core.users u on u.id = r.user_id
      where r.organization_id = ${organizationId} and r.incident_id = ${incidentId}
      union all
      select a.acknowledged_by, u.email, 'request', l.linked_by, a.acknowledged_at
      from divinux.incident_alerts l
      join ${alertsRelation} a on a.id = l.alert_id
      join core.users u on u.id = a.acknowledged_by
      where l.organization_id = ${organizationId} and l.incident_id = ${incidentId} and l.rule = 'responder_request'
    ) responders
    order by user_id, added_at`.execute(db)
  return rows.rows.sort((a, b) => a.addedAt.getTime() - b.addedAt.getTime() || a.userId.localeCompare(b.userId))
}

export type IncidentResponderRow = Awaited<ReturnType<typeof incidentResponders>>[number]

/** Adds a responder; answers false when they were one already. */
export async function addResponder(
  trx: Executor,
  responder: { organizationId: string; incidentId: string; userId: string; via: 'api' | 'chat'; addedBy: string | null },
): Promise<boolean> {
  const added = await trx
    .insertInto('divinux.incidentResponders')
    .values(responder)
    .onConflict((conflict) => conflict.columns(['incidentId', 'userId']).doNothing())
    .returning('userId')
    .executeTakeFirst()
  return added !== undefined
}

/** Newest first. */
/** One change of the incident, as its timeline row records it. */
export async function findTimelineEntry(db: Executor, organizationId: string, incidentId: string, entryId: string) {
  return db
    .selectFrom('divinux.incidentTimeline')
    .select(['id', 'kind', 'data'])
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .where('id', '=', entryId)
    .executeTakeFirst()
}

export async function listTimeline(db: Executor, organizationId: string, incidentId: string, page: Page) {
  const base = db
    .selectFrom('divinux.incidentTimeline as e')
    .where('e.organizationId', '=', organizationId)
    .where('e.incidentId', '=', incidentId)
  return paged(
    base,
    (rows) =>
      rows
        .select(['e.id', 'e.kind', 'e.body', 'e.data', 'e.authorId', 'e.createdAt'])
        .orderBy('e.createdAt', 'desc')
        .orderBy('e.seq', 'desc'),
    page,
  )
}

/**
 * The escalation states of an alert that pages, or paged, for its incident: another alert of the
 * incident in one of them pages no one itself (decision 0019, "pages once per incident").
 */
export const PAGING_STATES = ['active', 'acknowledged', 'exhausted'] as const

/**
 * Takes, until the transaction ends, the paging lock of each open incident these alerts are in,
 * in the order of the incidents' ids, in one statement. Whoever decides whether an alert pages for
 * its incident (decision 0019, "pages once per incident") holds it: a second starter, in this
 * replica or another, waits until the first committed its decision, then reads it. The fixed order
 * keeps two starters from waiting on each other. Transaction-scoped advisory locks, not the
 * incidents' rows: the rows are updated by people acknowledging and by correlation, which need
 * not wait for paging.
 */
export async function lockPagingOfIncidents(trx: Executor, alerts: ReadonlyArray<{ organizationId: string; alertId: string }>) {
  if (alerts.length === 0) return
  await sql`
    select pg_advisory_xact_lock(hashtextextended('incident-paging:' || locked.incident_id, 0))
    from (
      select distinct l.incident_id
      from unnest(array[${sql.join(alerts.map((alert) => alert.organizationId))}]::uuid[], array[${sql.join(alerts.map((alert) => alert.alertId))}]::uuid[])
        as batch(organization_id, alert_id)
      join divinux.incident_alerts l on l.organization_id = batch.organization_id and l.alert_id = batch.alert_id
      join divinux.incidents i on i.id = l.incident_id and i.status <> 'resolved'
      order by l.incident_id
    ) locked`.execute(trx)
}

/** An alert's open incidents (with its link's rule), and another of their alerts that pages or paged. */
export interface AlertIncidents {
  incidents: Array<{ incidentId: string; number: number; rule: string }>
  paging?: { incidentId: string; number: number; alertId: string }
}

/**
 * For a batch of alerts, in one statement: each alert's open incidents, and another alert of one
 * of them whose escalation pages or paged (in PAGING_STATES; not one that joined as a responder
 * request, which pages the people it asks). It reads what was committed when it runs: what the
 * caller's own batch starts after it, the caller keeps track of.
 */
export async function openIncidentsOf(db: Executor, alerts: ReadonlyArray<{ organizationId: string; alertId: string }>) {
  const byAlert = new Map<string, AlertIncidents>()
  if (alerts.length === 0) return byAlert
  const result = await sql<{ alertId: string; incidentId: string; number: number; rule: string; pagingAlertId: string | null }>`
    select l.alert_id as "alertId", i.id as "incidentId", i.number, l.rule, paging.alert_id as "pagingAlertId"
    from unnest(array[${sql.join(alerts.map((alert) => alert.organizationId))}]::uuid[], array[${sql.join(alerts.map((alert) => alert.alertId))}]::uuid[])
      as batch(organization_id, alert_id)
    join divinux.incident_alerts l on l.organization_id = batch.organization_id and l.alert_id = batch.alert_id
    join divinux.incidents i on i.id = l.incident_id and i.status <> 'resolved'
    left join lateral (
      select other.alert_id from divinux.incident_alerts other
      where other.incident_id = l.incident_id and other.alert_id <> l.alert_id
        and other.rule <> 'responder_request'
        and other.alert_id in (${alertsEscalating(db, PAGING_STATES)})
      limit 1
    ) paging on true`.execute(db)
  for (const row of result.rows) {
    const found = byAlert.get(row.alertId) ?? { incidents: [] }
    found.incidents.push({ incidentId: row.incidentId, number: row.number, rule: row.rule })
    if (!found.paging && row.pagingAlertId) found.paging = { incidentId: row.incidentId, number: row.number, alertId: row.pagingAlertId }
    byAlert.set(row.alertId, found)
  }
  return byAlert
}

/** Moves links from one incident to another, adding `extra` to what each matched; answers the alert ids moved. */
export async function moveLinks(
  trx: Executor,
  organizationId: string,
  from: string,
  to: string,
  extra: Record<string, unknown>,
  change: { alertIds?: string[]; rule?: string; linkedBy?: string } = {},
): Promise<string[]> {
  let query = trx
    .updateTable('divinux.incidentAlerts')
    .set({
      incidentId: to,
      matched: sql`matched || ${JSON.stringify(extra)}::jsonb`,
      open: sql<boolean>`(select status <> 'resolved' from divinux.incidents where id = ${to})`,
      ...(change.rule ? { rule: change.rule, score: 1, linkedBy: change.linkedBy ?? null, linkedAt: sql<Date>`now()` } : {}),
    })
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', from)
  if (change.alertIds) query = query.where('alertId', 'in', change.alertIds)
  return (await query.returning('alertId').execute()).map((row) => row.alertId)
}

/** Which of the alerts are in the incident, with their fingerprints. */
export async function linkedAlerts(db: Executor, organizationId: string, incidentId: string, alertIds: string[]) {
  if (alertIds.length === 0) return []
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin(alertsRelation.as('a'), 'a.id', 'l.alertId')
    .select(['l.alertId', 'a.fingerprint'])
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('l.alertId', 'in', alertIds)
    .execute()
}

/** Correlation never puts an alert with these fingerprints back in the incident. */
export async function excludeFingerprints(trx: Executor, organizationId: string, incidentId: string, fingerprints: string[]) {
  if (fingerprints.length === 0) return
  await trx
    .insertInto('divinux.incidentExclusions')
    .values([...new Set(fingerprints)].map((fingerprint) => ({ organizationId, incidentId, fingerprint })))
    .onConflict((conflict) => conflict.doNothing())
    .execute()
}

export async function markMerged(trx: Executor, organizationId: string, incidentId: string, into: string) {
  await trx
    .updateTable('divinux.incidents')
    .set({
      mergedInto: into,
      status: 'resolved',
      resolvedAt: sql<Date>`now()`,
      mitigatedAt: sql<Date>`coalesce(mitigated_at, now())`,
      acknowledgedAt: sql<Date>`coalesce(acknowledged_at, now())`,
      updatedAt: sql<Date>`now()`,
    })
    .where('organizationId', '=', organizationId)
    .where('id', '=', incidentId)
    .execute()
  await syncLinksOpen(trx, organizationId, incidentId)
}

/** Other incidents, open or resolved since `since`, not merged away: newest first, at most `limit`. */
export async function nearbyIncidents(db: Executor, organizationId: string, incidentId: string, since: Date, limit: number) {
  return incidentsOf(db, organizationId)
    .where('i.id', '<>', incidentId)
    .where('i.mergedInto', 'is', null)
    .where((where) => where.or([where('i.status', '<>', 'resolved'), where('i.resolvedAt', '>', since)]))
    .orderBy('i.createdAt', 'desc')
    .limit(limit)
    .execute()
}

/** The distinct services and label pairs of the alerts of each incident. */
export async function incidentFacets(db: Executor, organizationId: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return { services: [], labels: [] }
  const services = await db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin(alertsRelation.as('a'), 'a.id', 'l.alertId')
    .select(['l.incidentId', 'a.service'])
    .distinct()
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', 'in', incidentIds)
    .where('a.service', 'is not', null)
    .execute()
  const labels = await sql<{ incidentId: string; key: string; value: string }>`
    select distinct l.incident_id as "incidentId", kv.key, kv.value
    from divinux.incident_alerts l join ${alertsRelation} a on a.id = l.alert_id
    cross join lateral jsonb_each_text(a.labels) kv
    where l.organization_id = ${organizationId} and l.incident_id in (${sql.join(incidentIds)})`.execute(db)
  return { services: services as Array<{ incidentId: string; service: string }>, labels: labels.rows }
}

/**
 * Acknowledges or resolves the incident's alerts that are not yet, as the alert routes do one by
 * one (decision 0019, "The incident works its alerts"), in one statement however many alerts a
 * storm left (alerts/lifecycle.ts). Answers the ids moved.
 */
export async function settleIncidentAlerts(
  trx: Executor,
  organizationId: string,
  incidentId: string,
  to: AlertMove,
  userId: string | null,
): Promise<string[]> {
  return moveAlerts(trx, {
    organizationId,
    to,
    ackTimeout: ackTimeoutFromNow,
    // A responder request is acknowledged by the person it asks, never by the incident.
    which: sql`id in (
      select l.alert_id from divinux.incident_alerts l
      where l.incident_id = ${incidentId} and l.organization_id = ${organizationId}
        and (${to} = 'resolved' or l.rule <> 'responder_request'))`,
    actorUserId: userId,
    data: { incidentId },
  })
}

/** The incident's alerts from synthetic checks (labels carry the check), first first, at most 100. */
export async function checkAlertsOf(db: Executor, organizationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin(alertsRelation.as('a'), 'a.id', 'l.alertId')
    .select(['a.id as alertId', 'a.service', 'a.status', 'a.labels', 'a.firstSeenAt'])
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
    .where('a.source', '=', 'synthetics')
    .orderBy('l.linkedAt')
    .limit(100)
    .execute()
}

/** The ids of the incident's alerts (at most 1,000, first first). */
export async function alertIdsOf(db: Executor, organizationId: string, incidentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('divinux.incidentAlerts')
    .select('alertId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .orderBy('linkedAt')
    .limit(1000)
    .execute()
  return rows.map((row) => row.alertId)
}

/** Status page incidents correlation put in the incident, with why. */
export async function statusLinksOf(db: Executor, organizationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentStatusLinks')
    .select(['statusIncidentId', 'rule', 'score', 'matched', 'linkedAt'])
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .orderBy('linkedAt')
    .execute()
}

/** The incidents an alert is in, with what a move of their status needs (milestones, snooze). */
function incidentsOfAlertToMove(trx: Executor, organizationId: string, alertId: string) {
  return trx
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['i.id', 'i.status', 'i.acknowledgedAt', 'i.mitigatedAt', 'i.resolvedAt', 'i.snoozedUntil'])
    .where('l.organizationId', '=', organizationId)
    .where('l.alertId', '=', alertId)
}

/** The incidents in triage an alert is in, locked: what its acknowledgement acknowledges. */
export async function triagedIncidentsOf(trx: Executor, organizationId: string, alertId: string) {
  return incidentsOfAlertToMove(trx, organizationId, alertId).where('i.status', '=', 'triage').forUpdate('i').execute()
}

/**
 * The open incidents an alert is in that alerts opened and whose every alert is now resolved
 * (responder requests aside: they are people asked to help, not signals), locked; none when the
 * organization's incident settings say a person resolves them.
 */
export async function incidentsResolvedByAlertsOf(trx: Executor, organizationId: string, alertId: string) {
  return (
    incidentsOfAlertToMove(trx, organizationId, alertId)
      .where('i.status', '<>', 'resolved')
      .where('i.openedBy', '=', 'alert')
      // Unless the organization turned it off (incident settings).
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('divinux.incidentSettings as s')
              .select('s.organizationId')
              .whereRef('s.organizationId', '=', 'i.organizationId')
              .where('s.resolveWithAlerts', '=', false),
          ),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('divinux.incidentAlerts as other')
              .innerJoin(alertsRelation.as('a'), 'a.id', 'other.alertId')
              .select('other.alertId')
              .whereRef('other.incidentId', '=', 'i.id')
              .where('other.rule', '<>', 'responder_request')
              .where('a.status', '<>', 'resolved'),
          ),
        ),
      )
      .forUpdate('i')
      .execute()
  )
}

/** Timeline entries written after `since`, oldest first, with their authors' addresses. */
export async function timelineSince(db: Executor, organizationId: string, incidentId: string, since: Date, limit: number) {
  return db
    .selectFrom('divinux.incidentTimeline as t')
    .leftJoin('core.users as u', 'u.id', 't.authorId')
    .select(['t.kind', 't.body', 't.data', 't.createdAt', 'u.email as author'])
    .where('t.organizationId', '=', organizationId)
    .where('t.incidentId', '=', incidentId)
    .where('t.createdAt', '>', since)
    .orderBy('t.createdAt')
    .limit(limit)
    .execute()
}

/** The incident's people: its role holders and responders, with their addresses. */
export async function incidentPeople(db: Executor, organizationId: string, incidentId: string) {
  const roles = db
    .selectFrom('divinux.incidentRoles')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
  const responders = db
    .selectFrom('divinux.incidentResponders')
    .select('userId')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
  return db.selectFrom('core.users').select(['id', 'email']).where('id', 'in', roles.union(responders)).execute()
}

/** Whether `claimIncidentsBehind` would find an incident now, as the job census asks it (decision 0033, "Tables"). */
export const INCIDENT_CHAT_BEHIND_EXISTS = `exists (select 1 from divinux.incidents
  where (chat_synced_at is null or chat_synced_at < updated_at) and (chat_sync_until is null or chat_sync_until < now()))`

/**
 * Takes up to `limit` incidents whose chat is behind them for `leaseSeconds` (another replica
 * skips them meanwhile): one per organization per round, the organizations waiting longest first,
 * so a storm of incidents in one organization does not hold back another's. The lease is taken by
 * compare-and-set, so two replicas that pick the same incident take it once. Answers each with the
 * updated_at it will show, as text: a Date keeps milliseconds, PostgreSQL microseconds, and the
 * incident would stay behind.
 *
 * An incident never shown is marked `-infinity` (still behind), so that `chatBehind` during the
 * sync, which marks it null, is told apart by `markChatSynced` from the state the sync took it in.
 */
export async function claimIncidentsBehind(db: Executor, limit: number, leaseSeconds: number) {
  const free = sql`(chat_sync_until is null or chat_sync_until < now())`
  const claimed = await sql<{ id: string; organizationId: string; seenAt: string }>`
    update divinux.incidents set chat_sync_until = now() + make_interval(secs => ${leaseSeconds}),
      chat_synced_at = coalesce(chat_synced_at, '-infinity')
    where id in (
      select id from (
        select distinct on (organization_id) id, updated_at from divinux.incidents
        where (chat_synced_at is null or chat_synced_at < updated_at) and ${free}
        order by organization_id, updated_at
      ) oldest_per_organization
      order by updated_at
      limit ${limit}
    ) and ${free}
    returning id, organization_id as "organizationId", updated_at::text as "seenAt"`.execute(db)
  return claimed.rows
}

/** The incident's chat is behind whatever it showed: the chat sync takes it in its next round. */
export async function chatBehind(db: Executor, organizationId: string, incidentId: string): Promise<void> {
  await db
    .updateTable('divinux.incidents')
    .set({ chatSyncedAt: null })
    .where('organizationId', '=', organizationId)
    .where('id', '=', incidentId)
    .execute()
}

/**
 * The incident's chat shows it as of `seen`; a change after that leaves it behind again, and so
 * does a `chatBehind` while it was being shown (a channel asked for then, which the sync may have
 * read too late): the claim marked the row non-null, `chatBehind` marks it null.
 */
export async function markChatSynced(db: Executor, incidentId: string, seenAt: string): Promise<void> {
  await db
    .updateTable('divinux.incidents')
    .set({
      chatSyncedAt: sql<Date>`case when chat_synced_at is null then null else ${seenAt}::timestamptz end`,
      chatSyncUntil: null,
    })
    .where('id', '=', incidentId)
    .execute()
}

/** Tries again after `seconds` (Slack refused or could not be reached). */
export async function retryChatSyncAfter(db: Executor, incidentId: string, seconds: number): Promise<void> {
  await db
    .updateTable('divinux.incidents')
    .set({ chatSyncUntil: sql<Date>`now() + make_interval(secs => ${seconds})` })
    .where('id', '=', incidentId)
    .execute()
}

/** The incident's alerts, as a subquery a caller filters by (`where alertId in …`). */
export function alertIdsOfIncident(db: Executor, organizationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .select('l.alertId')
    .where('l.organizationId', '=', organizationId)
    .where('l.incidentId', '=', incidentId)
}

/** An alert of the incident whose escalation is waiting for its next step, if any. */
export async function escalatingAlertOf(db: Executor, organizationId: string, incidentId: string) {
  const row = await alertIdsOfIncident(db, organizationId, incidentId)
    .where('l.alertId', 'in', alertsEscalating(db))
    .orderBy('l.linkedAt')
    .limit(1)
    .executeTakeFirst()
  return row?.alertId
}

/** The organization's incident by its number (INC-<number>). */
export async function incidentByNumber(db: Executor, organizationId: string, number: number) {
  const row = await db
    .selectFrom('divinux.incidents')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('number', '=', number)
    .executeTakeFirst()
  return row?.id
}

/** The organization's incident settings; the defaults when nobody changed them. */
export async function incidentSettingsOf(db: Executor, organizationId: string) {
  const row = await db
    .selectFrom('divinux.incidentSettings')
    .select(['resolveWithAlerts', 'updatedBy', 'updatedAt'])
    .where('organizationId', '=', organizationId)
    .executeTakeFirst()
  return row ? { ...row, defaults: false } : { resolveWithAlerts: true, defaults: true, updatedBy: null, updatedAt: null }
}

export async function putIncidentSettings(
  trx: Executor,
  organizationId: string,
  settings: { resolveWithAlerts: boolean },
  updatedBy: string,
) {
  await trx
    .insertInto('divinux.incidentSettings')
    .values({ organizationId, ...settings, updatedBy })
    .onConflict((conflict) => conflict.column('organizationId').doUpdateSet({ ...settings, updatedBy, updatedAt: sql<Date>`now()` }))
    .execute()
}

/** Whether any change waits for the change bus: a look through the partial index before claiming. */
/** `anyUndispatchedChange` as the job census asks it (decision 0033, "Tables"). */
export const UNDISPATCHED_CHANGE_EXISTS = 'exists (select 1 from divinux.incident_timeline where dispatched_at is null)'

export async function anyUndispatchedChange(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('divinux.incidentTimeline').select('id').where('dispatchedAt', 'is', null).limit(1).executeTakeFirst()
  return row !== undefined
}

/** Incident changes not dispatched yet, oldest first; locked and skipped by other replicas. */
export async function claimUndispatchedChanges(db: Executor, limit: number) {
  return db
    .selectFrom('divinux.incidentTimeline')
    .select(['id', 'organizationId', 'incidentId', 'kind', 'data', 'authorId', 'createdAt'])
    .where('dispatchedAt', 'is', null)
    .orderBy('seq')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export async function markChangesDispatched(db: Executor, ids: string[]) {
  if (ids.length === 0) return
  await db
    .updateTable('divinux.incidentTimeline')
    .set({ dispatchedAt: sql<Date>`now()` })
    .where('id', 'in', ids)
    .execute()
}
