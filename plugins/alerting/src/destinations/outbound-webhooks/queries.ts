import { sql } from 'kysely'
import { paged, type Executor, type Page } from '@svc/db'

const columns = ['id', 'name', 'url', 'events', 'enabled', 'createdBy', 'createdAt', 'updatedAt'] as const

function webhooksOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.outboundWebhooks').where('organizationId', '=', organizationId)
}

export async function listOutboundWebhooks(db: Executor, organizationId: string, page: Page) {
  return paged(
    webhooksOf(db, organizationId),
    (rows) =>
      rows
        .select(columns)
        .orderBy(sql`lower(name)`)
        .orderBy('id'),
    page,
  )
}

export async function findOutboundWebhook(db: Executor, organizationId: string, id: string, forUpdate = false) {
  const query = webhooksOf(db, organizationId).select(columns).where('id', '=', id)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type OutboundWebhookRow = NonNullable<Awaited<ReturnType<typeof findOutboundWebhook>>>

export async function outboundWebhooksAmong(db: Executor, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await webhooksOf(db, organizationId).select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}

export async function outboundNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = webhooksOf(db, organizationId)
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export async function insertOutboundWebhook(
  db: Executor,
  values: { organizationId: string; name: string; url: string; events: string[]; secret: string; enabled: boolean; createdBy: string },
) {
  return db.insertInto('divinux.outboundWebhooks').values(values).returning(columns).executeTakeFirstOrThrow()
}

export async function updateOutboundWebhook(
  db: Executor,
  organizationId: string,
  id: string,
  change: { name?: string; url?: string; events?: string[]; secret?: string; enabled?: boolean },
) {
  return db
    .updateTable('divinux.outboundWebhooks')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst()
}

export async function deleteOutboundWebhook(db: Executor, organizationId: string, id: string) {
  return db
    .deleteFrom('divinux.outboundWebhooks')
    .where('organizationId', '=', organizationId)
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst()
}

/** The organization's enabled webhooks subscribed to an event. */
export async function subscribedWebhooks(db: Executor, organizationId: string, event: string) {
  return webhooksOf(db, organizationId)
    .select(['id'])
    .where('enabled', '=', true)
    .where(sql<boolean>`${event} = any(events)`)
    .execute()
}

export async function insertDelivery(
  db: Executor,
  delivery: { webhookId: string; organizationId: string; event: string; alertId: string | null; attemptId: string | null; payload: string },
) {
  const { id } = await db.insertInto('divinux.outboundWebhookDeliveries').values(delivery).returning('id').executeTakeFirstOrThrow()
  return id
}

/** A pending delivery with what sending it needs; counts the attempt. */
export async function startDelivery(db: Executor, deliveryId: string) {
  return db
    .updateTable('divinux.outboundWebhookDeliveries as d')
    .from('divinux.outboundWebhooks as w')
    .set({ attempts: sql<number>`d.attempts + 1`, updatedAt: sql<Date>`now()` })
    .whereRef('w.id', '=', 'd.webhookId')
    .where('d.id', '=', deliveryId)
    .where('d.status', '=', 'pending')
    .returning(['d.id', 'd.payload', 'd.createdAt', 'd.attemptId', 'w.url', 'w.secret', 'w.enabled'])
    .executeTakeFirst()
}

export async function settleDelivery(
  db: Executor,
  deliveryId: string,
  outcome: { status: 'pending' | 'delivered' | 'failed'; responseStatus: number | null; error: string | null },
) {
  await db
    .updateTable('divinux.outboundWebhookDeliveries')
    .set({ ...outcome, updatedAt: sql<Date>`now()`, ...(outcome.status === 'delivered' ? { deliveredAt: sql<Date>`now()` } : {}) })
    .where('id', '=', deliveryId)
    .execute()
}

export async function listDeliveries(db: Executor, organizationId: string, webhookId: string, page: Page) {
  const base = db
    .selectFrom('divinux.outboundWebhookDeliveries')
    .where('organizationId', '=', organizationId)
    .where('webhookId', '=', webhookId)
  return paged(
    base,
    (rows) =>
      rows
        .select(['id', 'event', 'alertId', 'status', 'attempts', 'responseStatus', 'error', 'createdAt', 'updatedAt', 'deliveredAt'])
        .orderBy('createdAt', 'desc')
        .orderBy('id'),
    page,
  )
}
