import { sql } from 'kysely'
import type { Executor, Json } from '@svc/db'

export async function storedPreferences(db: Executor, userId: string) {
  return db
    .selectFrom('divinux.notificationPreferences')
    .select(['preferences', 'updatedAt'])
    .where('userId', '=', userId)
    .executeTakeFirst()
}

export async function savePreferences(db: Executor, userId: string, preferences: Json) {
  return db
    .insertInto('divinux.notificationPreferences')
    .values({ userId, preferences })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ preferences, updatedAt: sql<Date>`now()` }))
    .returning(['preferences', 'updatedAt'])
    .executeTakeFirstOrThrow()
}
