import { sql } from 'kysely'
import type { Executor, Json, Page } from '@svc/db'
import { jsonb, paged } from '@svc/db'
import { textArray, uuidArray } from './arrays.js'

export const checkColumns = [
  'id',
  'organizationId',
  'name',
  'kind',
  'request',
  'frequencySeconds',
  'timeoutMs',
  'degradedMs',
  'regions',
  'retries',
  'alertAfterFailures',
  'alertQuorum',
  'alertPriority',
  'escalationPolicyId',
  'statusComponentIds',
  'paused',
  'service',
  'state',
  'stateChangedAt',
  'nextDueAt',
  'lastPingAt',
  'createdAt',
  'updatedAt',
] as const

export type CheckRow = Awaited<ReturnType<typeof findCheck>> & object

/** What a person sets on a check. */
export interface CheckFields {
  name: string
  kind: string
  request: Json
  frequencySeconds: number
  timeoutMs: number
  degradedMs: number | null
  regions: string[]
  retries: number
  alertAfterFailures: number
  alertQuorum: string
  alertPriority: string
  escalationPolicyId: string | null
  statusComponentIds: string[]
  paused: boolean
  service: string | null
}

export async function listChecks(db: Executor, organizationId: string, page: Page) {
  return paged(
    db.selectFrom('divinux.syntheticChecks').where('organizationId', '=', organizationId),
    (rows) => rows.select(checkColumns).orderBy('createdAt').orderBy('id'),
    page,
  )
}

export async function findCheck(db: Executor, organizationId: string, checkId: string, forUpdate = false) {
  let query = db
    .selectFrom('divinux.syntheticChecks')
    .select(checkColumns)
    .where('organizationId', '=', organizationId)
    .where('id', '=', checkId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** A check by id alone: jobs and relays, which carry the id they were given. */
export async function checkById(db: Executor, checkId: string, forUpdate = false) {
  let query = db.selectFrom('divinux.syntheticChecks').select(checkColumns).where('id', '=', checkId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

const writable = (fields: Partial<CheckFields>) => ({
  ...fields,
  ...(fields.request !== undefined ? { request: jsonb(fields.request) } : {}),
  ...(fields.regions !== undefined ? { regions: textArray(fields.regions) } : {}),
  ...(fields.statusComponentIds !== undefined ? { statusComponentIds: uuidArray(fields.statusComponentIds) } : {}),
})

export async function insertCheck(
  db: Executor,
  organizationId: string,
  fields: CheckFields,
  extra: { nextDueAt: Date | null; heartbeatTokenHash: string | null; createdBy: string },
) {
  return db
    .insertInto('divinux.syntheticChecks')
    .values({ organizationId, ...writable(fields), ...extra } as never)
    .returning(checkColumns)
    .executeTakeFirstOrThrow()
}

export async function updateCheck(
  db: Executor,
  organizationId: string,
  checkId: string,
  fields: Partial<CheckFields> & { nextDueAt?: Date | null },
) {
  return db
    .updateTable('divinux.syntheticChecks')
    .set({ ...writable(fields), updatedAt: sql<Date>`now()` } as never)
    .where('organizationId', '=', organizationId)
    .where('id', '=', checkId)
    .returning(checkColumns)
    .executeTakeFirstOrThrow()
}

/** A heartbeat check's new push token (its hash); the old one stops working with this write. */
export async function replaceHeartbeatToken(db: Executor, organizationId: string, checkId: string, heartbeatTokenHash: string) {
  return db
    .updateTable('divinux.syntheticChecks')
    .set({ heartbeatTokenHash, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', checkId)
    .where('kind', '=', 'heartbeat')
    .returning(checkColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteCheck(db: Executor, organizationId: string, checkId: string) {
  await db.deleteFrom('divinux.syntheticChecks').where('organizationId', '=', organizationId).where('id', '=', checkId).execute()
}

export async function checkByHeartbeatToken(db: Executor, tokenHash: string) {
  return db.selectFrom('divinux.syntheticChecks').select(checkColumns).where('heartbeatTokenHash', '=', tokenHash).executeTakeFirst()
}

export async function recordPing(db: Executor, checkId: string) {
  await db
    .updateTable('divinux.syntheticChecks')
    .set({ lastPingAt: sql<Date>`now()` })
    .where('id', '=', checkId)
    .execute()
}

export async function setCheckState(db: Executor, checkId: string, state: string) {
  await db
    .updateTable('divinux.syntheticChecks')
    .set({ state, stateChangedAt: sql<Date>`now()` })
    .where('id', '=', checkId)
    .execute()
}

/** The 30 days a browser run limit is counted over. */
export const MONTH_SECONDS = 30 * 86_400

/**
 * The browser runs an organization's running browser checks are scheduled for in 30 days (a run
 * per region per period), leaving out one check (the one being changed).
 */
export async function browserRunsScheduled(db: Executor, organizationId: string, exceptCheckId?: string): Promise<number> {
  const result = await sql<{ runs: number }>`
    select coalesce(sum(cardinality(regions) * ceil(${MONTH_SECONDS}::numeric / frequency_seconds)), 0)::int as runs
    from divinux.synthetic_checks
    where organization_id = ${organizationId} and kind = 'browser' and not paused
      ${exceptCheckId ? sql`and id <> ${exceptCheckId}` : sql``}`.execute(db)
  return result.rows[0]?.runs ?? 0
}
