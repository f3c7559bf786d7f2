import { sql } from 'kysely'
import type { Executor, Page } from '@svc/db'
import { jsonb, paged } from '@svc/db'
import type { ComponentStatus } from '../model.js'
import type { ComponentChange } from './components.js'

export type IncidentKind = 'incident' | 'maintenance'

/** The columns of an incident or maintenance row as routes and documents read it. */
export const incidentColumns = [
  'id',
  'pageId',
  'kind',
  'name',
  'status',
  'impact',
  'published',
  'audienceIds',
  'alertId',
  'workflowId',
  'scheduledFor',
  'scheduledUntil',
  'autoStart',
  'autoComplete',
  'startedAt',
  'monitoringAt',
  'resolvedAt',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const
const updateColumns = [
  'id',
  'incidentId',
  'status',
  'body',
  'affectedComponents',
  'displayAt',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

export interface NewIncident {
  organizationId: string
  pageId: string
  kind: IncidentKind
  name: string
  status: string
  impact: string
  published: boolean
  /** The audiences it is published to; empty or unset: everyone (decision 0015, "Audiences"). */
  audienceIds?: string[]
  alertId?: string | null
  /** The incident of alerting it tells the public about. */
  alertingIncidentId?: string | null
  workflowId?: string | null
  scheduledFor?: Date | null
  scheduledUntil?: Date | null
  autoStart?: boolean
  autoComplete?: boolean
  startedAt?: Date
  resolvedAt?: Date | null
  createdBy: string | null
}

export async function listIncidents(
  db: Executor,
  organizationId: string,
  pageId: string,
  kind: IncidentKind,
  filter: { status?: string },
  page: Page,
) {
  let base = db
    .selectFrom('divinux.statusIncidents')
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('kind', '=', kind)
  if (filter.status) base = base.where('status', '=', filter.status)
  return paged(base, (rows) => rows.select(incidentColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc'), page)
}

export async function findIncident(
  db: Executor,
  organizationId: string,
  pageId: string,
  kind: IncidentKind,
  id: string,
  forUpdate = false,
) {
  let query = db
    .selectFrom('divinux.statusIncidents')
    .select(incidentColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('kind', '=', kind)
    .where('id', '=', id)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export type IncidentRow = NonNullable<Awaited<ReturnType<typeof findIncident>>>

/** An incident or maintenance by id alone, for jobs (which carry no organization). */
export async function incidentById(db: Executor, id: string, forUpdate = false) {
  let query = db
    .selectFrom('divinux.statusIncidents')
    .select([...incidentColumns, 'organizationId'])
    .where('id', '=', id)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function insertIncident(db: Executor, incident: NewIncident) {
  return db.insertInto('divinux.statusIncidents').values(incident).returning(incidentColumns).executeTakeFirstOrThrow()
}

export async function updateIncident(
  db: Executor,
  id: string,
  fields: Partial<{
    name: string
    status: string
    impact: string
    published: boolean
    audienceIds: string[]
    scheduledFor: Date
    scheduledUntil: Date
    autoStart: boolean
    autoComplete: boolean
    monitoringAt: Date | null
    resolvedAt: Date | null
    startedAt: Date
  }>,
) {
  return db
    .updateTable('divinux.statusIncidents')
    .set({ ...fields, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .returning(incidentColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteIncident(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('divinux.statusIncidents').where('id', '=', id).execute()
}

/** The components an incident names, with the status it gives each. */
export async function incidentComponents(db: Executor, incidentIds: string[]) {
  if (incidentIds.length === 0) return []
  return db
    .selectFrom('divinux.statusIncidentComponents')
    .select(['incidentId', 'componentId', 'status'])
    .where('incidentId', 'in', incidentIds)
    .execute()
}

/** Sets the statuses an incident gives its components (adding components it did not name before). */
export async function putIncidentComponents(db: Executor, incidentId: string, statuses: Map<string, ComponentStatus>): Promise<void> {
  if (statuses.size === 0) return
  await db
    .insertInto('divinux.statusIncidentComponents')
    .values([...statuses].map(([componentId, status]) => ({ incidentId, componentId, status })))
    .onConflict((oc) => oc.columns(['incidentId', 'componentId']).doUpdateSet({ status: (eb) => eb.ref('excluded.status') }))
    .execute()
}

export async function removeIncidentComponents(db: Executor, incidentId: string): Promise<void> {
  await db.deleteFrom('divinux.statusIncidentComponents').where('incidentId', '=', incidentId).execute()
}

export async function listUpdates(db: Executor, incidentIds: string[]) {
  if (incidentIds.length === 0) return []
  return db
    .selectFrom('divinux.statusIncidentUpdates')
    .select(updateColumns)
    .where('incidentId', 'in', incidentIds)
    .orderBy('displayAt', 'desc')
    .orderBy('createdAt', 'desc')
    .execute()
}

export type UpdateRow = Awaited<ReturnType<typeof listUpdates>>[number]

export async function insertUpdate(
  db: Executor,
  update: {
    incidentId: string
    status: string
    body: string
    affectedComponents: ComponentChange[]
    displayAt?: Date
    createdBy: string | null
  },
) {
  return db
    .insertInto('divinux.statusIncidentUpdates')
    .values({ ...update, affectedComponents: jsonb(update.affectedComponents) })
    .returning(updateColumns)
    .executeTakeFirstOrThrow()
}

/** The newest update of an incident. */
export async function latestUpdate(db: Executor, incidentId: string) {
  return db
    .selectFrom('divinux.statusIncidentUpdates')
    .select(updateColumns)
    .where('incidentId', '=', incidentId)
    .orderBy('displayAt', 'desc')
    .orderBy('createdAt', 'desc')
    .limit(1)
    .executeTakeFirst()
}
