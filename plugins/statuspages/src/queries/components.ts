import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { ComponentStatus } from '../model.js'

const componentColumns = [
  'id',
  'pageId',
  'groupId',
  'name',
  'description',
  'position',
  'status',
  'showUptime',
  'alertServices',
  'audienceIds',
  'createdAt',
  'updatedAt',
] as const
const groupColumns = ['id', 'pageId', 'name', 'description', 'position', 'createdAt', 'updatedAt'] as const

export interface ComponentFields {
  name: string
  description: string | null
  groupId: string | null
  position: number
  showUptime: boolean
  alertServices: string[]
  /** The audiences it is shown to besides the page's members; empty: everyone (decision 0015, "Audiences"). */
  audienceIds: string[]
}

/** A page's components in display order. */
export async function listComponents(db: Executor, organizationId: string, pageId: string) {
  return db
    .selectFrom('divinux.statusComponents')
    .select(componentColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .orderBy('position')
    .orderBy('createdAt')
    .orderBy('id')
    .execute()
}

export type ComponentRow = Awaited<ReturnType<typeof listComponents>>[number]

export async function findComponent(db: Executor, organizationId: string, pageId: string, componentId: string) {
  return db
    .selectFrom('divinux.statusComponents')
    .select(componentColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', '=', componentId)
    .executeTakeFirst()
}

/** Of `ids`, those that are components of the page (of its organization, in the query itself). */
export async function componentsOfPage(db: Executor, page: { id: string; organizationId: string }, ids: string[]) {
  if (ids.length === 0) return []
  return db
    .selectFrom('divinux.statusComponents')
    .select(['id', 'name', 'status', 'audienceIds'])
    .where('organizationId', '=', page.organizationId)
    .where('pageId', '=', page.id)
    .where('id', 'in', ids)
    .execute()
}

export async function insertComponent(
  db: Executor,
  organizationId: string,
  pageId: string,
  fields: ComponentFields,
  status: ComponentStatus,
) {
  const row = await db
    .insertInto('divinux.statusComponents')
    .values({ organizationId, pageId, ...fields, status, declaredStatus: status })
    .returning(componentColumns)
    .executeTakeFirstOrThrow()
  await db.insertInto('divinux.statusComponentChanges').values({ componentId: row.id, status, changedAt: row.createdAt }).execute()
  return row
}

export async function updateComponent(db: Executor, componentId: string, fields: Partial<ComponentFields>) {
  return db
    .updateTable('divinux.statusComponents')
    .set({ ...fields, updatedAt: sql<Date>`now()` })
    .where('id', '=', componentId)
    .returning(componentColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteComponent(db: Executor, componentId: string): Promise<void> {
  await db.deleteFrom('divinux.statusComponents').where('id', '=', componentId).execute()
}

/**
 * Sets components' statuses, recording each change with its time; a component already in its
 * status is left alone. Answers the changes made, as Statuspage's `affected_components` name them.
 */
/** The components' names and statuses now, by id, on one page. */
export async function componentStatusesOf(db: Executor, pageId: string, ids: string[]) {
  if (ids.length === 0) return []
  return db
    .selectFrom('divinux.statusComponents')
    .select(['id', 'name', 'status'])
    .where('pageId', '=', pageId)
    .where('id', 'in', ids)
    .execute()
}

/**
 * What a component shows (`status`) and what people declared of it (`declaredStatus`: the same
 * without its checks' verdicts, what the banner reads unless the page follows checks).
 */
export interface ComponentState {
  status: ComponentStatus
  declaredStatus: ComponentStatus
}

/** Sets components' states; a change of what they show is kept in their history and answered. */
export async function setComponentStatuses(db: Executor, pageId: string, states: Map<string, ComponentState>) {
  if (states.size === 0) return []
  const current = await db
    .selectFrom('divinux.statusComponents')
    .select(['id', 'name', 'status', 'declaredStatus'])
    .where('pageId', '=', pageId)
    .where('id', 'in', [...states.keys()])
    .forUpdate()
    .execute()
  const moved = current.filter((row) => {
    const next = states.get(row.id)!
    return next.status !== row.status || next.declaredStatus !== row.declaredStatus
  })
  for (const row of moved) {
    const next = states.get(row.id)!
    await db
      .updateTable('divinux.statusComponents')
      .set({ status: next.status, declaredStatus: next.declaredStatus, updatedAt: sql<Date>`now()` })
      .where('id', '=', row.id)
      .execute()
  }
  const changes = moved
    .filter((row) => states.get(row.id)!.status !== row.status)
    .map((row) => ({ code: row.id, name: row.name, oldStatus: row.status as ComponentStatus, newStatus: states.get(row.id)!.status }))
  if (changes.length > 0) {
    await db
      .insertInto('divinux.statusComponentChanges')
      .values(changes.map((change) => ({ componentId: change.code, status: change.newStatus })))
      .execute()
  }
  return changes
}

export type ComponentChange = Awaited<ReturnType<typeof setComponentStatuses>>[number]

/**
 * The statuses each of `componentIds` is held at: `declared` by published open incidents and
 * active maintenances, `checks` by the verdicts of the synthetic checks it follows.
 */
export async function heldStatuses(db: Executor, componentIds: string[]) {
  const held = new Map<string, { declared: ComponentStatus[]; checks: ComponentStatus[] }>(
    componentIds.map((id) => [id, { declared: [], checks: [] }]),
  )
  if (componentIds.length === 0) return held
  const rows = await db
    .selectFrom('divinux.statusIncidentComponents as c')
    .innerJoin('divinux.statusIncidents as i', 'i.id', 'c.incidentId')
    .select(['c.componentId', 'c.status', 'i.kind', 'i.status as incidentStatus'])
    .where('c.componentId', 'in', componentIds)
    .where((eb) =>
      eb.or([
        eb.and([eb('i.kind', '=', 'incident'), eb('i.status', '<>', 'resolved'), eb('i.published', '=', true)]),
        eb.and([eb('i.kind', '=', 'maintenance'), eb('i.status', 'in', ['in_progress', 'verifying']), eb('i.published', '=', true)]),
      ]),
    )
    .execute()
  for (const row of rows) {
    held.get(row.componentId)?.declared.push((row.kind === 'maintenance' ? 'under_maintenance' : row.status) as ComponentStatus)
  }
  // Checks the components follow hold them too (components/follow-checks.ts writes their verdicts).
  const followed = await db.selectFrom('divinux.statusComponents').select(['id', 'checkStatuses']).where('id', 'in', componentIds).execute()
  for (const row of followed) {
    const verdicts = Object.values(row.checkStatuses as Record<string, { status: ComponentStatus | null }>)
    held.get(row.id)?.checks.push(...verdicts.flatMap((verdict) => (verdict.status ? [verdict.status] : [])))
  }
  return held
}

/** Which of these components an active maintenance holds (in progress or verifying). */
export async function componentsUnderMaintenance(db: Executor, componentIds: string[]): Promise<Set<string>> {
  if (componentIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('divinux.statusIncidentComponents as c')
    .innerJoin('divinux.statusIncidents as i', 'i.id', 'c.incidentId')
    .select('c.componentId')
    .where('c.componentId', 'in', componentIds)
    .where('i.kind', '=', 'maintenance')
    .where('i.status', 'in', ['in_progress', 'verifying'])
    .execute()
  return new Set(rows.map((row) => row.componentId))
}

export async function listGroups(db: Executor, organizationId: string, pageId: string) {
  return db
    .selectFrom('divinux.statusComponentGroups')
    .select(groupColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .orderBy('position')
    .orderBy('createdAt')
    .orderBy('id')
    .execute()
}

export type GroupRow = Awaited<ReturnType<typeof listGroups>>[number]

export async function findGroup(db: Executor, organizationId: string, pageId: string, groupId: string) {
  return db
    .selectFrom('divinux.statusComponentGroups')
    .select(groupColumns)
    .where('organizationId', '=', organizationId)
    .where('pageId', '=', pageId)
    .where('id', '=', groupId)
    .executeTakeFirst()
}

export async function insertGroup(
  db: Executor,
  organizationId: string,
  pageId: string,
  fields: { name: string; description: string | null; position: number },
) {
  return db
    .insertInto('divinux.statusComponentGroups')
    .values({ organizationId, pageId, ...fields })
    .returning(groupColumns)
    .executeTakeFirstOrThrow()
}

export async function updateGroup(
  db: Executor,
  groupId: string,
  fields: { name?: string; description?: string | null; position?: number },
) {
  return db
    .updateTable('divinux.statusComponentGroups')
    .set({ ...fields, updatedAt: sql<Date>`now()` })
    .where('id', '=', groupId)
    .returning(groupColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteGroup(db: Executor, groupId: string): Promise<void> {
  await db.deleteFrom('divinux.statusComponentGroups').where('id', '=', groupId).execute()
}

/** The next position at the end of a page's components or groups. */
export async function nextPosition(db: Executor, table: 'divinux.statusComponents' | 'divinux.statusComponentGroups', pageId: string) {
  const row = await db
    .selectFrom(table)
    .select(sql<number>`coalesce(max(position) + 1, 0)::int`.as('next'))
    .where('pageId', '=', pageId)
    .executeTakeFirstOrThrow()
  return row.next
}

/** Components of the organization that follow any of these alert services (any letter case), with their pages. */
export async function componentsFollowingServices(db: Executor, organizationId: string, services: string[]) {
  if (services.length === 0) return []
  const lowered = [...new Set(services.map((service) => service.toLowerCase()))]
  return db
    .selectFrom('divinux.statusComponents')
    .select(['id', 'pageId', 'name'])
    .where('organizationId', '=', organizationId)
    .where(sql<boolean>`exists (select 1 from unnest(alert_services) followed where lower(followed) = any(${lowered}::text[]))`)
    .orderBy('position')
    .orderBy('createdAt')
    .execute()
}
