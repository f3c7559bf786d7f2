import type { Executor } from '@svc/db'
import { incidentColumns, incidentComponents, listUpdates, type IncidentKind } from './incidents.js'

/** A page's components and groups, for its public documents. */
export async function publicComponents(db: Executor, pageId: string) {
  const [components, groups] = await Promise.all([
    db
      .selectFrom('divinux.statusComponents')
      .select([
        'id',
        'pageId',
        'groupId',
        'name',
        'description',
        'position',
        'status',
        'declaredStatus',
        'showUptime',
        'createdAt',
        'updatedAt',
      ])
      .where('pageId', '=', pageId)
      .orderBy('position')
      .orderBy('createdAt')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('divinux.statusComponentGroups')
      .select(['id', 'pageId', 'name', 'description', 'position', 'createdAt', 'updatedAt'])
      .where('pageId', '=', pageId)
      .orderBy('position')
      .orderBy('createdAt')
      .orderBy('id')
      .execute(),
  ])
  return { components, groups }
}

export type PublicComponents = Awaited<ReturnType<typeof publicComponents>>

export type PublicRecordFilter =
  { which: 'recent'; limit: number } | { which: 'unresolved' } | { which: 'upcoming' } | { which: 'active' } | { which: 'current' }

/**
 * Published incidents or maintenances of a page with their updates and component statuses:
 * the newest `recent` ones, the `unresolved` incidents, or `upcoming` (scheduled), `active`
 * (in progress, verifying) and `current` (both) maintenances.
 */
export async function publicRecords(db: Executor, pageId: string, kind: IncidentKind, filter: PublicRecordFilter) {
  let query = db
    .selectFrom('divinux.statusIncidents')
    .select(incidentColumns)
    .where('pageId', '=', pageId)
    .where('kind', '=', kind)
    .where('published', '=', true)
  if (filter.which === 'unresolved') query = query.where('status', '<>', 'resolved')
  if (filter.which === 'upcoming') query = query.where('status', '=', 'scheduled')
  if (filter.which === 'active') query = query.where('status', 'in', ['in_progress', 'verifying'])
  if (filter.which === 'current') query = query.where('status', 'in', ['scheduled', 'in_progress', 'verifying'])
  query =
    kind === 'maintenance' && filter.which !== 'recent'
      ? query.orderBy('scheduledFor').orderBy('id')
      : query.orderBy('startedAt', 'desc').orderBy('id', 'desc')
  if (filter.which === 'recent') query = query.limit(filter.limit)
  const records = await query.execute()
  const ids = records.map((record) => record.id)
  const [updates, components] = await Promise.all([listUpdates(db, ids), incidentComponents(db, ids)])
  return records.map((record) => ({
    ...record,
    updates: updates.filter((update) => update.incidentId === record.id),
    componentIds: components.filter((component) => component.incidentId === record.id).map((component) => component.componentId),
  }))
}

export type PublicRecord = Awaited<ReturnType<typeof publicRecords>>[number]

/** Whose components: one page's (its public uptime) or a whole organization's (the uptime report). */
export type ComponentScope = { pageId: string } | { organizationId: string }

/**
 * Status changes of the scope's components in [from, to) (to: now when left out), and each
 * one's status just before `from`, for uptime.
 */
export async function componentHistory(db: Executor, scope: ComponentScope, from: Date, to?: Date) {
  const [column, id] = 'pageId' in scope ? (['s.pageId', scope.pageId] as const) : (['s.organizationId', scope.organizationId] as const)
  const [before, during] = await Promise.all([
    db
      .selectFrom('divinux.statusComponentChanges as c')
      .innerJoin('divinux.statusComponents as s', 's.id', 'c.componentId')
      .distinctOn('c.componentId')
      .select(['c.componentId', 'c.status', 'c.changedAt'])
      .where(column, '=', id)
      .where('c.changedAt', '<', from)
      .orderBy('c.componentId')
      .orderBy('c.changedAt', 'desc')
      .orderBy('c.id', 'desc')
      .execute(),
    db
      .selectFrom('divinux.statusComponentChanges as c')
      .innerJoin('divinux.statusComponents as s', 's.id', 'c.componentId')
      .select(['c.componentId', 'c.status', 'c.changedAt'])
      .where(column, '=', id)
      .where('c.changedAt', '>=', from)
      .$if(to !== undefined, (query) => query.where('c.changedAt', '<', to!))
      .orderBy('c.changedAt')
      .orderBy('c.id')
      .execute(),
  ])
  return [...before, ...during]
}
