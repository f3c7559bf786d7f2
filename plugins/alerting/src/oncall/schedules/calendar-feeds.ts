import { sql } from 'kysely'
import type { Executor } from '@svc/db'

export async function findFeed(db: Executor, userId: string) {
  return db.selectFrom('divinux.calendarFeeds').select(['createdAt', 'rotatedAt']).where('userId', '=', userId).executeTakeFirst()
}

/** Sets the user's feed token, replacing the one before (which stops working with this statement). */
export async function putFeedToken(db: Executor, userId: string, tokenHash: string) {
  return db
    .insertInto('divinux.calendarFeeds')
    .values({ userId, tokenHash })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ tokenHash, rotatedAt: sql<Date>`now()` }))
    .returning(['createdAt', 'rotatedAt'])
    .executeTakeFirstOrThrow()
}

export async function deleteFeed(db: Executor, userId: string) {
  return db.deleteFrom('divinux.calendarFeeds').where('userId', '=', userId).returning('userId').executeTakeFirst()
}

export async function feedOwner(db: Executor, tokenHash: string) {
  const row = await db.selectFrom('divinux.calendarFeeds').select('userId').where('tokenHash', '=', tokenHash).executeTakeFirst()
  return row?.userId
}
