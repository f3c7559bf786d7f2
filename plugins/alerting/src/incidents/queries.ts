import { sql } from 'kysely'
import { jsonb, lockUntilCommit, paged, type Executor, type Page } from '@svc/db'
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
  'i.createdAt',
  'i.updatedAt',
] as const

function incidentsOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.incidents as i')
    .where('i.organizationId', '=', organizationId)
    .select([
      ...incidentColumns,
      (eb) =>
        eb
          .selectFrom('divinux.incidentAlerts as l')
          .select(sql<number>`count(*)::int`.as('count'))
          .whereRef('l.incidentId', '=', 'i.id')
          .as('alertCount'),
    ])
}

export type IncidentRow = NonNullable<Awaited<ReturnType<typeof findIncident>>>

export async function findIncident(db: Executor, organizationId: string, incidentId: string, forUpdate = false) {
  const query = incidentsOf(db, organizationId).where('i.id', '=', incidentId)
  return forUpdate ? query.forUpdate('i').executeTakeFirst() : query.executeTakeFirst()
}

/** Newest first; `open` is every status but resolved. */
export async function listIncidents(db: Executor, organizationId: string, status: IncidentStatus | 'open' | undefined, page: Page) {
  const base =
    status === 'open'
      ? db.selectFrom('divinux.incidents as i').where('i.organizationId', '=', organizationId).where('i.status', '<>', 'resolved')
      : status
        ? db.selectFrom('divinux.incidents as i').where('i.organizationId', '=', organizationId).where('i.status', '=', status)
        : db.selectFrom('divinux.incidents as i').where('i.organizationId', '=', organizationId)
  return paged(
    base,
    (rows) =>
      rows
        .select([
          ...incidentColumns,
          (eb) =>
            eb
              .selectFrom('divinux.incidentAlerts as l')
              .select(sql<number>`count(*)::int`.as('count'))
              .whereRef('l.incidentId', '=', 'i.id')
              .as('alertCount'),
        ])
        .orderBy('i.createdAt', 'desc')
        .orderBy('i.id', 'desc'),
    page,
  )
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
    .values({ ...incident, number: next })
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
}

export async function updateIncident(trx: Executor, organizationId: string, incidentId: string, change: IncidentChange): Promise<void> {
  await trx
    .updateTable('divinux.incidents')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', incidentId)
    .execute()
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
    .selectFrom('divinux.alerts as a')
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

/** Links alerts that are in no incident; answers the ids it linked (one already linked is left where it is). */
export async function linkAlerts(trx: Executor, organizationId: string, incidentId: string, links: AlertLink[]): Promise<string[]> {
  if (links.length === 0) return []
  const rows = await trx
    .insertInto('divinux.incidentAlerts')
    .values(links.map((link) => ({ ...link, matched: jsonb(link.matched), organizationId, incidentId })))
    .onConflict((conflict) => conflict.column('alertId').doNothing())
    .returning('alertId')
    .execute()
  return rows.map((row) => row.alertId)
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
    .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
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
  return db
    .selectFrom('divinux.incidentAlerts as l')
    .innerJoin('divinux.incidents as i', 'i.id', 'l.incidentId')
    .select(['i.id', 'i.number', 'i.title', 'i.status', 'i.severity', 'l.rule', 'l.score', 'l.matched', 'l.linkedAt'])
    .where('l.organizationId', '=', organizationId)
    .where('l.alertId', '=', alertId)
    .executeTakeFirst()
}

export interface NewTimelineRow {
  organizationId: string
  incidentId: string
  kind: string
  body: string | null
  data: Record<string, unknown>
  authorId: string | null
}

export async function addTimeline(trx: Executor, entries: NewTimelineRow[]) {
  if (entries.length === 0) return []
  return trx
    .insertInto('divinux.incidentTimeline')
    .values(entries.map((entry) => ({ ...entry, data: jsonb(entry.data) })))
    .returning(['id', 'kind', 'body', 'data', 'authorId', 'createdAt'])
    .execute()
}

/** Newest first. */
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
