import { sql } from 'kysely'
import type { Executor, Json } from '@svc/db'
import type { IngestedEvent } from '../ingestion/event.js'

const alertColumns = [
  'a.id', 'a.configId', 'a.source', 'a.title', 'a.description', 'a.priority', 'a.status', 'a.service', 'a.fingerprint',
  'a.groupKey', 'a.groupId', 'a.occurrences', 'a.labels', 'a.firstSeenAt', 'a.lastSeenAt', 'a.acknowledgedAt',
  'a.acknowledgedBy', 'a.resolvedAt', 'a.resolvedBy', 'a.createdAt', 'a.updatedAt',
] as const

export type AlertRow = NonNullable<Awaited<ReturnType<typeof findAlert>>>

export async function findAlert(db: Executor, organizationId: string, alertId: string) {
  return db.selectFrom('divinux.alerts as a').select(alertColumns).where('a.organizationId', '=', organizationId).where('a.id', '=', alertId).executeTakeFirst()
}

export interface AlertFilter {
  status?: string
  priority?: string
  source?: string
  service?: string
  from?: string
  to?: string
}

export async function listAlerts(db: Executor, organizationId: string, filter: AlertFilter, page: { offset: number; limit: number }) {
  let query = db.selectFrom('divinux.alerts as a').where('a.organizationId', '=', organizationId)
  if (filter.status) query = query.where('a.status', '=', filter.status)
  if (filter.priority) query = query.where('a.priority', '=', filter.priority)
  if (filter.source) query = query.where('a.source', '=', filter.source)
  if (filter.service) query = query.where('a.service', '=', filter.service)
  if (filter.from) query = query.where('a.createdAt', '>=', new Date(filter.from))
  if (filter.to) query = query.where('a.createdAt', '<', new Date(filter.to))
  const [rows, count] = await Promise.all([
    query.select(alertColumns).orderBy('a.createdAt', 'desc').orderBy('a.id', 'desc').offset(page.offset).limit(page.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.total) }
}

export async function listAlertEvents(db: Executor, organizationId: string, alertId: string) {
  return db
    .selectFrom('divinux.alertEvents')
    .select(['id', 'type', 'actorUserId', 'data', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('alertId', '=', alertId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute()
}

export async function recordAlertEvent(db: Executor, organizationId: string, alertId: string, type: 'created' | 'occurred' | 'acknowledged' | 'resolved', data: Json, actorUserId: string | null = null) {
  await db.insertInto('divinux.alertEvents').values({ organizationId, alertId, type, data, actorUserId }).execute()
}

export interface FiringAlert {
  organizationId: string
  configId: string
  source: string
  priority: string
  groupWindowSeconds: number
  event: IngestedEvent
}

/**
 * A firing event: a new alert, or one more occurrence of the unresolved alert with its
 * fingerprint (the partial unique index decides, so concurrent deliveries cannot both create).
 * A new alert joins the group of the first alert with its group key inside the config's window.
 */
export async function fireAlert(db: Executor, firing: FiringAlert): Promise<{ id: string; created: boolean }> {
  const { event, organizationId } = firing
  const group = event.groupKey
    ? await db
        .selectFrom('divinux.alerts')
        .select('id')
        .where('organizationId', '=', organizationId)
        .where('groupKey', '=', event.groupKey)
        .where('groupId', 'is', null)
        .where('createdAt', '>', sql<Date>`now() - make_interval(secs => ${firing.groupWindowSeconds})`)
        .orderBy('createdAt')
        .limit(1)
        .executeTakeFirst()
    : undefined
  const row = await db
    .insertInto('divinux.alerts')
    .values({
      organizationId,
      configId: firing.configId,
      source: firing.source,
      title: event.title,
      description: event.description ?? null,
      priority: firing.priority,
      service: event.service ?? null,
      fingerprint: event.fingerprint,
      groupKey: event.groupKey ?? null,
      groupId: group?.id ?? null,
      labels: event.labels,
    })
    .onConflict((oc) =>
      oc
        .columns(['organizationId', 'fingerprint'])
        .where('status', '<>', 'resolved')
        .doUpdateSet({ occurrences: sql<number>`divinux.alerts.occurrences + 1`, lastSeenAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` }),
    )
    .returning(['id', sql<boolean>`xmax = 0`.as('created')])
    .executeTakeFirstOrThrow()
  return { id: row.id, created: row.created }
}

/** Moves the alert from one of `from` to `to`; answers the alert only when it was in one of them (compare-and-set). */
export async function moveAlert(
  db: Executor,
  organizationId: string,
  where: { id: string } | { fingerprint: string },
  from: Array<'open' | 'acknowledged'>,
  to: 'acknowledged' | 'resolved',
  userId: string | null,
) {
  let query = db
    .updateTable('divinux.alerts')
    .set(
      to === 'acknowledged'
        ? { status: to, acknowledgedAt: sql<Date>`now()`, acknowledgedBy: userId, updatedAt: sql<Date>`now()` }
        : { status: to, resolvedAt: sql<Date>`now()`, resolvedBy: userId, updatedAt: sql<Date>`now()` },
    )
    .where('organizationId', '=', organizationId)
    .where('status', 'in', from)
  query = 'id' in where ? query.where('id', '=', where.id) : query.where('fingerprint', '=', where.fingerprint)
  return query.returning('id').executeTakeFirst()
}

/** The stored answer of a delivery already processed, or undefined after recording this one as taken. */
export async function claimDelivery(db: Executor, configId: string, organizationId: string, deliveryKey: string) {
  const claimed = await db
    .insertInto('divinux.webhookDeliveries')
    .values({ configId, organizationId, deliveryKey, result: {} })
    .onConflict((oc) => oc.columns(['configId', 'deliveryKey']).doNothing())
    .returning('deliveryKey')
    .executeTakeFirst()
  if (claimed) return undefined
  const earlier = await db.selectFrom('divinux.webhookDeliveries').select('result').where('configId', '=', configId).where('deliveryKey', '=', deliveryKey).executeTakeFirstOrThrow()
  return earlier.result
}

export async function saveDeliveryResult(db: Executor, configId: string, deliveryKey: string, result: Json): Promise<void> {
  await db.updateTable('divinux.webhookDeliveries').set({ result }).where('configId', '=', configId).where('deliveryKey', '=', deliveryKey).execute()
}

/** The enabled config an ingest key belongs to. */
export async function findIngestConfig(db: Executor, apiKeyHash: string) {
  return db
    .selectFrom('divinux.webhookConfigs')
    .select(['id', 'organizationId', 'format', 'defaultPriority', 'signingSecret', 'groupWindowSeconds'])
    .where('apiKeyHash', '=', apiKeyHash)
    .where('enabled', '=', true)
    .executeTakeFirst()
}
