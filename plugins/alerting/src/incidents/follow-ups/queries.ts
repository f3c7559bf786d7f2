import { sql, type NotNull } from 'kysely'
import type { Executor } from '@svc/db'

// The follow-up table is the incidents module's; every query is scoped by organization in its own WHERE.

const columns = [
  'id',
  'incidentId',
  'rcaActionItemId',
  'title',
  'description',
  'status',
  'trackerId',
  'syncStatus',
  'syncError',
  'ticketId',
  'ticketKey',
  'ticketUrl',
  'ticketStatus',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

const followUpsOf = (db: Executor, organizationId: string) =>
  db.selectFrom('divinux.incidentFollowUps').where('organizationId', '=', organizationId).select(columns)

/** The incident's follow-ups, oldest first (at most 200: follow-ups are few). */
export async function listFollowUps(db: Executor, organizationId: string, incidentId: string) {
  return followUpsOf(db, organizationId).where('incidentId', '=', incidentId).orderBy('createdAt').orderBy('id').limit(200).execute()
}

export async function findFollowUp(db: Executor, organizationId: string, followUpId: string, forUpdate = false) {
  const query = followUpsOf(db, organizationId).where('id', '=', followUpId)
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

export type FollowUpRow = NonNullable<Awaited<ReturnType<typeof findFollowUp>>>

export async function insertFollowUp(
  db: Executor,
  followUp: {
    organizationId: string
    incidentId: string | null
    rcaActionItemId?: string
    title: string
    description: string | null
    trackerId: string | null
    createdBy: string | null
  },
) {
  return db
    .insertInto('divinux.incidentFollowUps')
    .values({ ...followUp, syncStatus: followUp.trackerId ? 'pending' : 'none' })
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export async function updateFollowUp(
  db: Executor,
  organizationId: string,
  followUpId: string,
  change: Partial<{
    title: string
    description: string | null
    status: 'open' | 'done'
    syncStatus: 'none' | 'pending' | 'synced' | 'failed'
    syncError: string | null
    ticketId: string
    ticketKey: string
    ticketUrl: string
    ticketStatus: string
  }>,
) {
  return db
    .updateTable('divinux.incidentFollowUps')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', followUpId)
    .returning(columns)
    .executeTakeFirstOrThrow()
}

/** The follow-up whose ticket this is, in the tracker's organization; locked for the change. */
export async function followUpOfTicket(db: Executor, organizationId: string, trackerId: string, ticketId: string) {
  return followUpsOf(db, organizationId).where('trackerId', '=', trackerId).where('ticketId', '=', ticketId).forUpdate().executeTakeFirst()
}

/** The tickets of these RCA action items, by item (an item has at most one). */
export async function followUpsOfActionItems(db: Executor, organizationId: string, itemIds: string[]) {
  if (itemIds.length === 0) return []
  return followUpsOf(db, organizationId).where('rcaActionItemId', 'in', itemIds).$narrowType<{ rcaActionItemId: NotNull }>().execute()
}
