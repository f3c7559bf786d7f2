import type { Executor, Json } from '@svc/db'

// Deliveries and the configs they are checked against: intake's own tables.

/** The stored answer of a delivery already processed, or undefined after recording this one as taken. */
export async function claimDelivery(db: Executor, configId: string, organizationId: string, deliveryKey: string) {
  const claimed = await db
    .insertInto('divinux.webhookDeliveries')
    .values({ configId, organizationId, deliveryKey, result: {} })
    .onConflict((oc) => oc.columns(['configId', 'deliveryKey']).doNothing())
    .returning('deliveryKey')
    .executeTakeFirst()
  if (claimed) return undefined
  const earlier = await db
    .selectFrom('divinux.webhookDeliveries')
    .select('result')
    .where('configId', '=', configId)
    .where('deliveryKey', '=', deliveryKey)
    .executeTakeFirstOrThrow()
  return earlier.result
}

export async function saveDeliveryResult(db: Executor, configId: string, deliveryKey: string, result: Json): Promise<void> {
  await db
    .updateTable('divinux.webhookDeliveries')
    .set({ result })
    .where('configId', '=', configId)
    .where('deliveryKey', '=', deliveryKey)
    .execute()
}

export type IngestConfig = NonNullable<Awaited<ReturnType<typeof findIngestConfig>>>

/** The enabled config an ingest key belongs to. */
export async function findIngestConfig(db: Executor, apiKeyHash: string) {
  return db
    .selectFrom('divinux.webhookConfigs')
    .select([
      'id',
      'organizationId',
      'name',
      'format',
      'defaultPriority',
      'autoAnalysis',
      'signingSecret',
      'groupWindowSeconds',
      'rateLimitPerMinute',
      'apiKeyHash',
    ])
    .where('apiKeyHash', '=', apiKeyHash)
    .where('enabled', '=', true)
    .executeTakeFirst()
}
