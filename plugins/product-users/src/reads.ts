import type { Executor } from '@svc/db'
import { defaultPreferences, type NotificationPreferences } from './preferences.js'

/**
 * What other surfaces may read of product users (wired in by the service): each user's
 * notification preferences, the stored ones or the defaults in the account's time zone. Alerting
 * reads them to decide how to page someone.
 */
export async function notificationPreferencesOf(db: Executor, userIds: string[]): Promise<Map<string, NotificationPreferences>> {
  if (userIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('core.users as u')
    .leftJoin('divinux.notificationPreferences as p', 'p.userId', 'u.id')
    .select(['u.id', 'u.timeZone', 'p.preferences'])
    .where('u.id', 'in', userIds)
    .execute()
  // Stored preferences were validated as a whole NotificationPreferences when saved (routes.ts).
  return new Map(rows.map((row) => [row.id, (row.preferences as NotificationPreferences | null) ?? defaultPreferences(row.timeZone)]))
}
