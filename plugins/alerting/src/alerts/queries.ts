import { type RawBuilder, type Selectable, sql } from 'kysely'
import { type DivinuxAlerts, type Executor, type Json, jsonb, type Page, paged } from '@svc/db'

/** What an alert's timeline records (the table's check constraint holds it to this list). */
export const alertEventTypes = [
  'created',
  'occurred',
  'acknowledged',
  'resolved',
  'escalated',
  'escalation_ended',
  'silenced',
  'priority_changed',
  'command_room_opened',
  'reopened',
] as const
export type AlertEventType = (typeof alertEventTypes)[number]

/** The timeline events the alert event bus hands its subscribers (alerts/event-bus.ts). */
export const BUS_EVENT_TYPES = ['created', 'acknowledged', 'resolved'] as const

/** The columns of an alert the modules above may read in their own statements (`alertsRelation`). */
const PUBLISHED_ALERT_COLUMNS = [
  'id',
  'organizationId',
  'title',
  'description',
  'priority',
  'status',
  'service',
  'source',
  'fingerprint',
  'labels',
  'firstSeenAt',
  'lastSeenAt',
  'acknowledgedAt',
  'acknowledgedBy',
  'resolvedAt',
] as const satisfies ReadonlyArray<keyof DivinuxAlerts>

export type PublishedAlert = Pick<Selectable<DivinuxAlerts>, (typeof PUBLISHED_ALERT_COLUMNS)[number]>

const snake = (column: string) => column.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/**
 * The alerts as the modules above read them inside their own statements, a join away from their
 * rows: a derived table of the columns this module publishes, so a reader depends on those and
 * not on the table. The planner pulls a derived table this simple up into the statement, so a join
 * through it is planned as a join on the table (its indexes, its statistics).
 * `join ${alertsRelation} a on …` in SQL; `.innerJoin(alertsRelation.as('a'), …)` in Kysely.
 */
export const alertsRelation = sql<PublishedAlert>`(select ${sql.raw(PUBLISHED_ALERT_COLUMNS.map(snake).join(', '))} from divinux.alerts)`

/** An alert as the surface reads it (aliased `a`). */
export const alertColumns = [
  'a.id',
  'a.configId',
  'a.source',
  'a.title',
  'a.description',
  'a.priority',
  'a.status',
  'a.service',
  'a.fingerprint',
  'a.groupKey',
  'a.groupId',
  'a.occurrences',
  'a.labels',
  'a.runbookUrl',
  'a.sourceUrl',
  'a.firstSeenAt',
  'a.lastSeenAt',
  'a.acknowledgedAt',
  'a.acknowledgedBy',
  'a.resolvedAt',
  'a.resolvedBy',
  'a.createdAt',
  'a.updatedAt',
  'a.commandRoomOpenedAt',
] as const

export type AlertRow = NonNullable<Awaited<ReturnType<typeof findAlert>>>

export async function findAlert(db: Executor, organizationId: string, alertId: string) {
  return db
    .selectFrom('divinux.alerts as a')
    .select(alertColumns)
    .where('a.organizationId', '=', organizationId)
    .where('a.id', '=', alertId)
    .executeTakeFirst()
}

/** Alerts by id, whatever their organization, with it: for a worker holding rows that name them. */
export async function alertsByIds(db: Executor, alertIds: string[]) {
  if (alertIds.length === 0) return []
  return db
    .selectFrom('divinux.alerts as a')
    .select([...alertColumns, 'a.organizationId'])
    .where('a.id', 'in', alertIds)
    .execute()
}

export interface AlertFilter {
  status?: string
  priority?: string
  source?: string
  service?: string
  from?: string
  to?: string
}

export async function listAlerts(db: Executor, organizationId: string, filter: AlertFilter, page: Page) {
  let query = db.selectFrom('divinux.alerts as a').where('a.organizationId', '=', organizationId)
  if (filter.status) query = query.where('a.status', '=', filter.status)
  if (filter.priority) query = query.where('a.priority', '=', filter.priority)
  if (filter.source) query = query.where('a.source', '=', filter.source)
  if (filter.service) query = query.where('a.service', '=', filter.service)
  if (filter.from) query = query.where('a.createdAt', '>=', new Date(filter.from))
  if (filter.to) query = query.where('a.createdAt', '<', new Date(filter.to))
  return paged(query, (rows) => rows.select(alertColumns).orderBy('a.createdAt', 'desc').orderBy('a.id', 'desc'), page)
}

/** A page of an alert's timeline, oldest first, with the number of its entries. */
export async function listAlertEvents(db: Executor, organizationId: string, alertId: string, page: Page) {
  const query = db.selectFrom('divinux.alertEvents').where('organizationId', '=', organizationId).where('alertId', '=', alertId)
  return paged(
    query,
    (rows) =>
      rows.select(['id', 'type', 'actorUserId', 'data', 'occurrences', 'lastOccurredAt', 'createdAt']).orderBy('createdAt').orderBy('id'),
    page,
  )
}

export async function recordAlertEvent(
  db: Executor,
  organizationId: string,
  alertId: string,
  type: AlertEventType,
  data: Json,
  actorUserId: string | null = null,
) {
  await db.insertInto('divinux.alertEvents').values({ organizationId, alertId, type, data, actorUserId }).execute()
}

/**
 * An alert a person raises rather than a source (a responder request): created with its `created`
 * event dispatched at once, since it is no alert for outbound webhooks, workflows or correlation.
 * Answers its id.
 */
export async function raiseAlert(
  db: Executor,
  alert: {
    organizationId: string
    title: string
    description: string | null
    priority: string
    /** Unique to this alert: a raised alert is never a repeat of another. */
    fingerprint: string
    labels: Json
    /** Who asked; null for a workflow acting on its own. */
    raisedBy: string | null
    /** The `created` event's data: what it was raised about. */
    about: Json
  },
): Promise<string> {
  const { id } = await db
    .insertInto('divinux.alerts')
    .values({
      organizationId: alert.organizationId,
      source: 'incident',
      title: alert.title,
      description: alert.description,
      priority: alert.priority,
      fingerprint: alert.fingerprint,
      labels: jsonb(alert.labels),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('divinux.alertEvents')
    .values({
      organizationId: alert.organizationId,
      alertId: id,
      type: 'created',
      data: jsonb(alert.about),
      actorUserId: alert.raisedBy,
      dispatchedAt: sql<Date>`now()`,
    })
    .execute()
  return id
}

/** Changes an alert's priority; answers the one it had, or undefined when it already had this one. */
export async function setAlertPriority(db: Executor, organizationId: string, alertId: string, priority: string) {
  const before = await db
    .selectFrom('divinux.alerts')
    .select('priority')
    .where('organizationId', '=', organizationId)
    .where('id', '=', alertId)
    .forUpdate()
    .executeTakeFirst()
  if (!before || before.priority === priority) return undefined
  await db
    .updateTable('divinux.alerts')
    .set({ priority, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', alertId)
    .execute()
  return before.priority
}

/** Opens an alert's command room whatever its priority; false when it was open already. */
export async function openCommandRoom(db: Executor, organizationId: string, alertId: string): Promise<boolean> {
  const opened = await db
    .updateTable('divinux.alerts')
    .set({ commandRoomOpenedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', alertId)
    .where('commandRoomOpenedAt', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return opened !== undefined
}

/** Whether any alert lifecycle event waits for dispatch: one cheap read before a transaction that claims. */
/** `anyUndispatchedEvent` as the job census asks it, with its other looks in one statement (decision 0033, "Tables"). */
export const UNDISPATCHED_EVENT_EXISTS = `exists (select 1 from divinux.alert_events
  where dispatched_at is null and type in (${BUS_EVENT_TYPES.map((type) => `'${type}'`).join(', ')}))`

export async function anyUndispatchedEvent(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.alertEvents')
    .select('id')
    .where('dispatchedAt', 'is', null)
    .where('type', 'in', BUS_EVENT_TYPES)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Whether a new alert of the organization still waits for the event bus (its `created` event not
 * dispatched yet), as SQL: a probe of alert_events_waiting_idx.
 */
export const alertWaitingForBus = (organization: RawBuilder<unknown>) => sql<boolean>`exists (select 1 from divinux.alert_events waiting
  where waiting.organization_id = ${organization} and waiting.type = 'created' and waiting.dispatched_at is null)`

/** Alert lifecycle events not dispatched yet, oldest first; locked and skipped by other replicas. */
export async function claimUndispatchedEvents(db: Executor, limit: number) {
  return db
    .selectFrom('divinux.alertEvents')
    .select(['id', 'organizationId', 'alertId', 'type', 'data', 'actorUserId', 'createdAt'])
    .where('dispatchedAt', 'is', null)
    .where('type', 'in', BUS_EVENT_TYPES)
    .$narrowType<{ type: (typeof BUS_EVENT_TYPES)[number] }>()
    .orderBy('createdAt')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export async function markDispatched(db: Executor, eventIds: string[]) {
  if (eventIds.length === 0) return
  await db
    .updateTable('divinux.alertEvents')
    .set({ dispatchedAt: sql<Date>`now()` })
    .where('id', 'in', eventIds)
    .execute()
}

/** The service names the organization's alerts carried in the last `days` days, busiest first, with how many and when last. */
export async function recentServiceNames(db: Executor, organizationId: string, days: number) {
  return db
    .selectFrom('divinux.alerts')
    .select(['service', sql<number>`count(*)::int`.as('alerts'), sql<Date>`max(created_at)`.as('lastSeenAt')])
    .where('organizationId', '=', organizationId)
    .where('service', 'is not', null)
    .where('createdAt', '>', sql<Date>`now() - make_interval(days => ${days})`)
    .groupBy('service')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('service')
    .limit(1_000)
    .execute() as Promise<Array<{ service: string; alerts: number; lastSeenAt: Date }>>
}
