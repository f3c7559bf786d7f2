import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { isSeenBy, seenBy } from './audiences.js'
import { incidentColumns, incidentComponents, listUpdates, type IncidentKind } from './incidents.js'

/** All of a page's components (with the audiences each is tagged for) and groups. */
export async function pageComponents(db: Executor, pageId: string) {
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
        'audienceIds',
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

export type PublicComponents = Awaited<ReturnType<typeof pageComponents>>

/**
 * A page's components and groups as a reader of `reader` audiences sees them (decision 0015,
 * "Audiences"): components tagged for other audiences are left out, and so are groups all of whose
 * components are (a group's name can say whose they are).
 */
export function seenComponents(all: PublicComponents, reader: readonly string[]): PublicComponents {
  const components = all.components.filter((component) => isSeenBy(reader, component.audienceIds))
  if (components.length === all.components.length) return all
  const groups = all.groups.filter(
    (group) =>
      components.some((component) => component.groupId === group.id) || !all.components.some((component) => component.groupId === group.id),
  )
  return { components, groups }
}

/** `seenComponents` of the page, read from the database. */
export async function publicComponents(db: Executor, pageId: string, reader: readonly string[]): Promise<PublicComponents> {
  return seenComponents(await pageComponents(db, pageId), reader)
}

export type PublicRecordFilter =
  { which: 'recent'; limit: number } | { which: 'unresolved' } | { which: 'upcoming' } | { which: 'active' } | { which: 'current' }

/**
 * Published incidents or maintenances of a page with their updates and component statuses:
 * the newest `recent` ones, the `unresolved` incidents, or `upcoming` (scheduled), `active`
 * (in progress, verifying) and `current` (both) maintenances. Only those a reader of `reader`
 * audiences sees, naming only the components they see.
 */
export async function publicRecords(
  db: Executor,
  pageId: string,
  kind: IncidentKind,
  filter: PublicRecordFilter,
  reader: readonly string[],
) {
  let query = db
    .selectFrom('divinux.statusIncidents')
    .select(incidentColumns)
    .where('pageId', '=', pageId)
    .where('kind', '=', kind)
    .where('published', '=', true)
    .where(seenBy(reader))
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
  if (records.length === 0) return []
  const ids = records.map((record) => record.id)
  const [updates, components, hidden] = await Promise.all([
    listUpdates(db, ids),
    incidentComponents(db, ids),
    hiddenComponents(db, pageId, reader),
  ])
  return records.map((record) => ({
    ...record,
    updates: updates
      .filter((update) => update.incidentId === record.id)
      .map((update) => ({ ...update, affectedComponents: unhidden(update.affectedComponents, hidden) })),
    componentIds: components
      .filter((component) => component.incidentId === record.id && !hidden.has(component.componentId))
      .map((component) => component.componentId),
  }))
}

export type PublicRecord = Awaited<ReturnType<typeof publicRecords>>[number]

/** The ids of the page's components a reader of `reader` audiences does not see. */
export async function hiddenComponents(db: Executor, pageId: string, reader: readonly string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom('divinux.statusComponents')
    .select('id')
    .where('pageId', '=', pageId)
    .where(sql<boolean>`not ${seenBy(reader)}`)
    .execute()
  return new Set(rows.map((row) => row.id))
}

/** An update's component changes (JSON, `code` the component's id) without those of hidden components. */
function unhidden<T>(affected: T, hidden: ReadonlySet<string>): T {
  if (hidden.size === 0 || !Array.isArray(affected)) return affected
  return affected.filter((change: { code?: string }) => !hidden.has(change.code ?? '')) as T
}

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
