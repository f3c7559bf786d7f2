import { sql } from 'kysely'
import { containing, paged, type Executor, type Page } from '@svc/db'
import { incidentOfAlert } from './incidents/index.js'

// What other surfaces may know of alerting's incidents (INC-n), the subject of analyses and RCAs
// (decision 0019, "One incident everywhere"): summaries for a list of links, the whole record an
// RCA draft is written from, a search, and the incident an alert is in. Reads only, each scoped
// to one organization.

/** Incidents by id, for showing what an RCA links to; ids of other organizations are absent. */
export async function incidentSummaries(db: Executor, organizationId: string, incidentIds: string[]) {
  if (incidentIds.length === 0) return new Map<string, IncidentSummary>()
  const rows = await db
    .selectFrom('divinux.incidents as i')
    .select(['i.id', 'i.number', 'i.title', 'i.severity', 'i.status', 'i.detectedAt', 'i.resolvedAt'])
    .select(servicesOfIncident(organizationId).as('services'))
    .where('i.organizationId', '=', organizationId)
    .where('i.id', 'in', incidentIds)
    .execute()
  return new Map(rows.map((row) => [row.id, row]))
}

export interface IncidentSummary {
  id: string
  number: number
  title: string
  severity: string
  status: string
  detectedAt: Date
  resolvedAt: Date | null
  /** The services of its alerts, in order. */
  services: string[]
}

/** The distinct services of the alerts of incident `i`, in order. */
const servicesOfIncident = (organizationId: string) =>
  sql<string[]>`array(
    select distinct a.service from divinux.incident_alerts l join divinux.alerts a on a.id = l.alert_id
    where l.organization_id = ${organizationId} and l.incident_id = i.id and a.service is not null
    order by a.service)`

/** The incident an alert is in, if any (the incidents door's `incidentOfAlert`, its id alone). */
export async function incidentIdOfAlert(db: Executor, organizationId: string, alertId: string): Promise<string | undefined> {
  return (await incidentOfAlert(db, organizationId, alertId))?.id
}

/**
 * An incident as a post-mortem needs it: its fields, its alerts (the first 100 by onset) and the
 * status-page incidents linked to it, its timeline, who was paged (by address, each once, the
 * first time and the channels) and who acknowledged its alerts (each once, the first time).
 */
export async function incidentRecord(db: Executor, organizationId: string, incidentId: string) {
  const incident = await db
    .selectFrom('divinux.incidents as i')
    .select(['i.id', 'i.number', 'i.title', 'i.summary', 'i.severity', 'i.status', 'i.startedAt', 'i.detectedAt'])
    .select(['i.acknowledgedAt', 'i.resolvedAt'])
    .select(servicesOfIncident(organizationId).as('services'))
    .where('i.organizationId', '=', organizationId)
    .where('i.id', '=', incidentId)
    .executeTakeFirst()
  if (!incident) return undefined
  const [alerts, statusIncidentIds, timeline, paged, acknowledged] = await Promise.all([
    db
      .selectFrom('divinux.incidentAlerts as l')
      .innerJoin('divinux.alerts as a', 'a.id', 'l.alertId')
      .select(['a.id', 'a.title', 'a.priority', 'a.status', 'a.service', 'a.occurrences', 'a.firstSeenAt', 'a.startedAt'])
      .where('l.organizationId', '=', organizationId)
      .where('l.incidentId', '=', incidentId)
      .orderBy(sql`coalesce(a.started_at, a.first_seen_at)`)
      .orderBy('a.id')
      .limit(100)
      .execute(),
    db
      .selectFrom('divinux.incidentStatusLinks')
      .select('statusIncidentId')
      .where('organizationId', '=', organizationId)
      .where('incidentId', '=', incidentId)
      .execute(),
    db
      .selectFrom('divinux.incidentTimeline as t')
      .leftJoin('core.users as u', 'u.id', 't.authorId')
      .select(['t.kind', 't.body', 't.data', 't.createdAt', 'u.email as author'])
      .where('t.organizationId', '=', organizationId)
      .where('t.incidentId', '=', incidentId)
      .orderBy('t.createdAt')
      .orderBy('t.seq')
      .limit(200)
      .execute(),
    sql<{ email: string; channels: string[]; at: Date }>`
      select u.email, array_agg(distinct n.channel order by n.channel) as channels, min(n.created_at) as at
      from divinux.notification_attempts n
      join divinux.incident_alerts l on l.alert_id = n.alert_id and l.organization_id = ${organizationId} and l.incident_id = ${incidentId}
      join core.users u on u.id = n.user_id
      where n.organization_id = ${organizationId}
      group by u.email order by at, u.email`.execute(db),
    sql<{ email: string; at: Date }>`
      select u.email, min(a.acknowledged_at) as at
      from divinux.incident_alerts l
      join divinux.alerts a on a.id = l.alert_id
      join core.users u on u.id = a.acknowledged_by
      where l.organization_id = ${organizationId} and l.incident_id = ${incidentId} and a.acknowledged_at is not null
      group by u.email order by at, u.email`.execute(db),
  ])
  return {
    ...incident,
    alerts,
    statusIncidentIds: statusIncidentIds.map((row) => row.statusIncidentId),
    timeline,
    paged: paged.rows,
    acknowledged: acknowledged.rows,
  }
}

export type IncidentRecord = NonNullable<Awaited<ReturnType<typeof incidentRecord>>>

export interface IncidentSearch {
  q?: string
  from?: string
  to?: string
}

/**
 * Incidents (not merged away) whose title or summary holds every word of `q`, any letter case,
 * detected in [from, to), newest first.
 */
export async function searchAlertingIncidents(db: Executor, organizationId: string, search: IncidentSearch, page: Page) {
  let base = db.selectFrom('divinux.incidents as i').where('i.organizationId', '=', organizationId).where('i.mergedInto', 'is', null)
  for (const word of search.q?.split(/\s+/).filter(Boolean) ?? [])
    base = base.where((eb) => eb.or([eb('i.title', 'ilike', containing(word)), eb('i.summary', 'ilike', containing(word))]))
  if (search.from) base = base.where('i.detectedAt', '>=', new Date(search.from))
  if (search.to) base = base.where('i.detectedAt', '<', new Date(search.to))
  return paged(
    base,
    (rows) =>
      rows
        .select(['i.id', 'i.number', 'i.title', 'i.severity', 'i.status', 'i.detectedAt', 'i.resolvedAt'])
        .select(servicesOfIncident(organizationId).as('services'))
        .orderBy('i.detectedAt', 'desc')
        .orderBy('i.id', 'desc'),
    page,
  )
}
