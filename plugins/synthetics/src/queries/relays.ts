import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import { textArray } from './arrays.js'

export const relayColumns = [
  'id',
  'organizationId',
  'name',
  'regions',
  'heartbeatSeconds',
  'lastHeartbeatAt',
  'version',
  'browser',
  'createdAt',
  'updatedAt',
] as const

/** Heartbeats a relay may miss before it is unhealthy. */
export const MISSED_HEARTBEATS = 3

/** SQL: whether the relay aliased `relay` has heartbeated within its last 3 periods. */
export const relayHealthy = sql<boolean>`(relay.last_heartbeat_at is not null and relay.last_heartbeat_at > now() - make_interval(secs => relay.heartbeat_seconds * ${MISSED_HEARTBEATS}))`

export async function listRelays(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.syntheticRelays as relay')
    .select([...relayColumns.map((column) => `relay.${column}` as const), relayHealthy.as('healthy')])
    .where('relay.organizationId', '=', organizationId)
    .orderBy('relay.createdAt')
    .orderBy('relay.id')
    .execute()
}

export async function findRelay(db: Executor, organizationId: string, relayId: string) {
  return db
    .selectFrom('divinux.syntheticRelays as relay')
    .select([...relayColumns.map((column) => `relay.${column}` as const), relayHealthy.as('healthy')])
    .where('relay.organizationId', '=', organizationId)
    .where('relay.id', '=', relayId)
    .executeTakeFirst()
}

export type RelayRow = NonNullable<Awaited<ReturnType<typeof findRelay>>>

export async function insertRelay(
  db: Executor,
  organizationId: string,
  fields: { name: string; regions: string[]; heartbeatSeconds: number; keyHash: string; createdBy: string },
) {
  const { id } = await db
    .insertInto('divinux.syntheticRelays')
    .values({ organizationId, ...fields, regions: textArray(fields.regions) } as never)
    .returning('id')
    .executeTakeFirstOrThrow()
  return (await findRelay(db, organizationId, id))!
}

export async function updateRelay(
  db: Executor,
  organizationId: string,
  relayId: string,
  fields: { name?: string; regions?: string[]; heartbeatSeconds?: number },
) {
  await db
    .updateTable('divinux.syntheticRelays')
    .set({ ...fields, ...(fields.regions ? { regions: textArray(fields.regions) } : {}), updatedAt: sql<Date>`now()` } as never)
    .where('organizationId', '=', organizationId)
    .where('id', '=', relayId)
    .execute()
  return findRelay(db, organizationId, relayId)
}

export async function deleteRelay(db: Executor, organizationId: string, relayId: string) {
  await db.deleteFrom('divinux.syntheticRelays').where('organizationId', '=', organizationId).where('id', '=', relayId).execute()
}

/** The relay a key belongs to, marking it alive (every authenticated call is a heartbeat). */
export async function relayByKey(db: Executor, keyHash: string, version: string | undefined) {
  return db
    .updateTable('divinux.syntheticRelays')
    .set({ lastHeartbeatAt: sql<Date>`now()`, ...(version ? { version } : {}) })
    .where('keyHash', '=', keyHash)
    .returning(['id', 'organizationId', 'name', 'regions', 'heartbeatSeconds', 'browser'])
    .executeTakeFirst()
}

/** Whether a relay can run a check of this kind in a region now: a healthy relay, with Chromium for a browser check. */
export const relayRuns = (kind: string, serving: { healthy: boolean; healthyBrowser: boolean } | undefined) =>
  (kind === 'browser' ? serving?.healthyBrowser : serving?.healthy) === true

/**
 * Every region an organization can run checks in through its relays: whether any relay serving
 * it is healthy, whether any has said it has Chromium (browser checks), and whether one healthy has.
 */
export async function relayRegions(db: Executor, organizationId: string) {
  const rows = await sql<{ region: string; healthy: boolean; browser: boolean; healthyBrowser: boolean }>`
    select region, bool_or(${relayHealthy}) as healthy, bool_or(relay.browser) as browser,
      bool_or(relay.browser and ${relayHealthy}) as "healthyBrowser"
    from divinux.synthetic_relays relay, unnest(relay.regions) as region
    where relay.organization_id = ${organizationId}
    group by region`.execute(db)
  return new Map(rows.rows.map(({ region, ...serving }) => [region, serving]))
}

/** What a relay said it can run: recorded at each heartbeat. */
export async function recordRelayBrowser(db: Executor, relayId: string, browser: boolean) {
  await db.updateTable('divinux.syntheticRelays').set({ browser }).where('id', '=', relayId).where('browser', '<>', browser).execute()
}
