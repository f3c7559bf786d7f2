import { sql } from 'kysely'
import { paged, type Executor, type Page } from '@svc/db'

// The tracker table is the destinations module's; every query is scoped by organization in its own WHERE.

const columns = [
  'id',
  'name',
  'kind',
  'siteUrl',
  'accountEmail',
  'project',
  'issueType',
  'credential',
  'webhookSecret',
  'enabled',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

const trackersOf = (db: Executor, organizationId: string) =>
  db.selectFrom('divinux.trackerIntegrations').where('organizationId', '=', organizationId)

export async function listTrackers(db: Executor, organizationId: string, page: Page) {
  return paged(
    trackersOf(db, organizationId),
    (rows) =>
      rows
        .select(columns)
        .orderBy(sql`lower(name)`)
        .orderBy('id'),
    page,
  )
}

export async function findTracker(db: Executor, organizationId: string, trackerId: string, forUpdate = false) {
  const query = trackersOf(db, organizationId).select(columns).where('id', '=', trackerId)
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

export type TrackerRow = NonNullable<Awaited<ReturnType<typeof findTracker>>>

/** A tracker by its id alone, for its webhook (the id in the URL, the signature proving the sender); with its organization. */
export async function trackerForEvents(db: Executor, trackerId: string) {
  return db
    .selectFrom('divinux.trackerIntegrations')
    .select([...columns, 'organizationId'])
    .where('id', '=', trackerId)
    .executeTakeFirst()
}

export async function trackerNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = trackersOf(db, organizationId)
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

/** Which of the ids are trackers of the organization. */
export async function trackersAmong(db: Executor, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await trackersOf(db, organizationId).select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}

export interface TrackerValues {
  id: string
  name: string
  kind: 'jira' | 'linear'
  siteUrl: string | null
  accountEmail: string | null
  project: string
  issueType: string | null
  credential: Buffer
  webhookSecret: Buffer
}

export async function insertTracker(db: Executor, organizationId: string, tracker: TrackerValues, createdBy: string) {
  return db
    .insertInto('divinux.trackerIntegrations')
    .values({ ...tracker, organizationId, createdBy })
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export async function updateTracker(
  db: Executor,
  organizationId: string,
  trackerId: string,
  change: Partial<Omit<TrackerValues, 'id' | 'kind'>> & { enabled?: boolean },
) {
  return db
    .updateTable('divinux.trackerIntegrations')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', trackerId)
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export async function deleteTracker(db: Executor, organizationId: string, trackerId: string) {
  await db.deleteFrom('divinux.trackerIntegrations').where('organizationId', '=', organizationId).where('id', '=', trackerId).execute()
}
