import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import type { ComponentStatus } from '../model.js'
import { componentStatusesOf, componentsOfPage, type ComponentChange } from '../queries/components.js'
import {
  deleteIncident,
  incidentComponents,
  insertIncident,
  insertUpdate,
  listUpdates,
  putIncidentComponents,
  updateIncident,
  type IncidentRow,
  type NewIncident,
} from '../queries/incidents.js'
import { touchPage } from '../queries/pages.js'
import type { SubscriberNotifications } from '../subscribers/notifications.js'
import { settleComponents } from './effects.js'

export interface RecordChange {
  status: string
  body: string
  /** The statuses the record gives components (added to those it named before). */
  statuses: Map<string, ComponentStatus>
  displayAt?: Date
  createdBy: string | null
  /** Whether subscribers hear of it (a published record's updates only). */
  notify: boolean
}

/**
 * Component ids of a request, each checked to be a component of the page: a 400 names the
 * first that is not (`components/2/componentId`).
 */
export async function checkComponents(
  db: Executor,
  page: { id: string; organizationId: string },
  input: Array<{ componentId: string; status: ComponentStatus }>,
  field = 'components',
) {
  const ids = input.map((entry) => entry.componentId)
  const known = new Set((await componentsOfPage(db, page, ids.filter(isUuid))).map((row) => row.id))
  const unknown = ids.findIndex((id) => !known.has(id))
  if (unknown >= 0) throw invalidField(`${field}/${unknown}/componentId`, 'is not a component of this status page')
  return new Map(input.map((entry) => [entry.componentId, entry.status]))
}

/**
 * A maintenance's update lists every component it names, as Statuspage does: the ones this update
 * moved with their change, the others with their status unchanged.
 */
async function everyNamed(db: Executor, pageId: string, named: string[], changes: ComponentChange[]): Promise<ComponentChange[]> {
  const changed = new Map(changes.map((change) => [change.code, change]))
  return (await componentStatusesOf(db, pageId, named)).map(
    (component) =>
      changed.get(component.id) ?? {
        code: component.id,
        name: component.name,
        oldStatus: component.status as ComponentStatus,
        newStatus: component.status as ComponentStatus,
      },
  )
}

/** What follows any change of a record: its component statuses, the components themselves, its update, the page's revision, notifications. */
async function afterChange(db: Executor, notifications: SubscriberNotifications, row: IncidentRow, change: RecordChange) {
  await putIncidentComponents(db, row.id, change.statuses)
  const named = (await incidentComponents(db, [row.id])).map((component) => component.componentId)
  const changes = row.published ? await settleComponents(db, row.pageId, named) : []
  const affectedComponents = row.kind === 'maintenance' ? await everyNamed(db, row.pageId, named, changes) : changes
  const update = await insertUpdate(db, {
    incidentId: row.id,
    status: change.status,
    body: change.body,
    affectedComponents,
    ...(change.displayAt ? { displayAt: change.displayAt } : {}),
    createdBy: change.createdBy,
  })
  await touchPage(db, row.pageId)
  if (row.published && change.notify) await notifications.queue(db, update.id)
  return { row, update }
}

/** A new incident or maintenance with its first update. */
export async function openRecord(db: Executor, notifications: SubscriberNotifications, incident: NewIncident, change: RecordChange) {
  return afterChange(db, notifications, await insertIncident(db, incident), change)
}

/** An update of an incident or maintenance, moving it to `change.status` with the times that status marks. */
export async function recordUpdate(db: Executor, notifications: SubscriberNotifications, incident: IncidentRow, change: RecordChange) {
  const now = new Date()
  const moved = change.status !== incident.status
  const row = await updateIncident(db, incident.id, {
    status: change.status,
    ...(moved && change.status === 'monitoring' && !incident.monitoringAt ? { monitoringAt: now } : {}),
    ...(moved && change.status === 'in_progress' ? { startedAt: now } : {}),
    ...(moved && ['resolved', 'completed', 'cancelled'].includes(change.status) ? { resolvedAt: now } : {}),
  })
  return afterChange(db, notifications, row, change)
}

/** Publishes or withdraws a record: its components follow (or stop following) it, and publishing tells subscribers its newest update. */
export async function setPublished(db: Executor, notifications: SubscriberNotifications, incident: IncidentRow, published: boolean) {
  const row = await updateIncident(db, incident.id, { published })
  if (published === incident.published) return row
  const named = (await incidentComponents(db, [row.id])).map((component) => component.componentId)
  await settleComponents(db, row.pageId, named)
  await touchPage(db, row.pageId)
  if (published) {
    const [latest] = await listUpdates(db, [row.id])
    if (latest) await notifications.queue(db, latest.id)
  }
  return row
}

/** Deletes an incident or maintenance; the components it held settle again. */
export async function removeRecord(db: Executor, row: IncidentRow): Promise<void> {
  const named = (await incidentComponents(db, [row.id])).map((component) => component.componentId)
  await deleteIncident(db, row.id)
  await settleComponents(db, row.pageId, named)
  await touchPage(db, row.pageId)
}

/** Each record's components and updates, for answering them. */
export async function recordDetails(db: Executor, rows: IncidentRow[]) {
  const ids = rows.map((row) => row.id)
  const [components, updates] = await Promise.all([incidentComponents(db, ids), listUpdates(db, ids)])
  return (row: IncidentRow) => ({
    components: components.filter((component) => component.incidentId === row.id),
    updates: updates.filter((update) => update.incidentId === row.id),
  })
}
