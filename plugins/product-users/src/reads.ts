import type { Executor } from '@svc/db'
import type { WebPushSubscription } from '@svc/notifier'
import { defaultPreferences, type NotificationPreferences, storedPreferencesOf } from './preferences.js'

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
  return new Map(
    rows.map((row) => {
      const stored = row.preferences as NotificationPreferences | null
      return [row.id, stored ? storedPreferencesOf(stored) : defaultPreferences(row.timeZone)]
    }),
  )
}

/** Each given user's verified addresses for e-mail, or numbers for SMS or voice, oldest first. */
export async function verifiedAddressesOf(
  db: Executor,
  userIds: string[],
  channel: 'email' | 'sms' | 'voice',
): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>()
  if (userIds.length === 0) return found
  const rows = await db
    .selectFrom('divinux.contactMethods')
    .select(['userId', 'address'])
    .where('userId', 'in', userIds)
    .where('type', '=', channel)
    .where('verifiedAt', 'is not', null)
    .orderBy('createdAt')
    .execute()
  for (const row of rows) found.set(row.userId, [...(found.get(row.userId) ?? []), row.address])
  return found
}

/** Each given user's web-push subscriptions (every device they subscribed), oldest first. */
export async function pushSubscriptionsOf(db: Executor, userIds: string[]): Promise<Map<string, WebPushSubscription[]>> {
  const found = new Map<string, WebPushSubscription[]>()
  if (userIds.length === 0) return found
  const rows = await db
    .selectFrom('divinux.contactMethods')
    .select(['userId', 'address', 'pushKeys'])
    .where('userId', 'in', userIds)
    .where('type', '=', 'push')
    .where('verifiedAt', 'is not', null)
    .orderBy('createdAt')
    .execute()
  for (const row of rows) {
    // Written only from a validated subscription's keys.
    const subscription = { endpoint: row.address, keys: row.pushKeys as unknown as WebPushSubscription['keys'] }
    found.set(row.userId, [...(found.get(row.userId) ?? []), subscription])
  }
  return found
}

/** Whether the number is one of the user's verified SMS numbers (a reply from it speaks for them). */
export async function hasVerifiedPhone(db: Executor, userId: string, phone: string): Promise<boolean> {
  const row = await db
    .selectFrom('divinux.contactMethods')
    .select('id')
    .where('userId', '=', userId)
    .where('type', '=', 'sms')
    .where('address', '=', phone)
    .where('verifiedAt', 'is not', null)
    .executeTakeFirst()
  return row !== undefined
}
