import { DateTime } from 'luxon'
import type { Executor } from '@svc/db'
import type { WebPushSubscription } from '@svc/notifier'

export type PagingChannel = 'email' | 'sms' | 'voice' | 'push'

/** What paging reads of a user's notification preferences (the product-users surface owns them). */
export interface PagingPreferences {
  channels: {
    email: { enabled: boolean; address: string | null }
    sms: { enabled: boolean; phoneNumber: string | null }
    voice: { enabled: boolean; phoneNumber: string | null }
    push: { enabled: boolean }
  }
  priorities: Record<string, PagingChannel[]>
  quietHours: { enabled: boolean; start: string; end: string; timeZone: string; bypassPriorities: string[] }
}

/** The product-users surface's read of preferences, wired in by the service. */
export type PreferencesReader = (db: Executor, userIds: string[]) => Promise<Map<string, PagingPreferences>>

const minutesOf = (clock: string) => {
  const [hour = 0, minute = 0] = clock.split(':').map(Number)
  return hour * 60 + minute
}

/** Whether `at` falls in the quiet hours, on the user's clock (a window past midnight wraps). */
function inQuietHours(quiet: PagingPreferences['quietHours'], at: Date): boolean {
  const local = DateTime.fromJSDate(at, { zone: quiet.timeZone })
  const now = local.hour * 60 + local.minute
  const [start, end] = [minutesOf(quiet.start), minutesOf(quiet.end)]
  return start < end ? now >= start && now < end : now >= start || now < end
}

/**
 * The channels that page a user for an alert of this priority now: the ones the priority routes
 * to and that are enabled, in the order the user listed them. During quiet hours a priority that
 * does not bypass them reaches no channel, and the reason is answered so it can be recorded.
 */
export function channelsFor(preferences: PagingPreferences, priority: string, at: Date): { channels: PagingChannel[]; reason?: string } {
  const quiet = preferences.quietHours
  if (quiet.enabled && !quiet.bypassPriorities.includes(priority) && inQuietHours(quiet, at)) {
    return { channels: [], reason: `quiet hours (${quiet.start} to ${quiet.end} ${quiet.timeZone}); ${priority} does not bypass them` }
  }
  const channels = (preferences.priorities[priority] ?? []).filter((channel) => preferences.channels[channel].enabled)
  return channels.length > 0 ? { channels } : { channels, reason: `no enabled channel is chosen for ${priority} alerts` }
}

/** The product-users surface's read of verified phone numbers, wired in by the service. */
export interface PhoneReader {
  /** Each user's verified numbers for the channel, oldest first. */
  verifiedPhonesOf(db: Executor, userIds: string[], channel: 'sms' | 'voice'): Promise<Map<string, string[]>>
  /** Whether the number is one of the user's verified SMS numbers. */
  hasVerifiedPhone(db: Executor, userId: string, phone: string): Promise<boolean>
}

/** The product-users surface's read of web-push subscriptions (every device a person subscribed), wired in by the service. */
export type PushReader = (db: Executor, userIds: string[]) => Promise<Map<string, WebPushSubscription[]>>
