import { DateTime } from 'luxon'
import type { Executor } from '@svc/db'
import type { WebPushSubscription } from '@svc/notifier'

export type PagingChannel = 'email' | 'sms' | 'voice' | 'push'
export type Urgency = 'high' | 'low'

/** A service's support hours: days 1 (Monday) to 7, a window on the service's clock. */
export interface SupportHours {
  timeZone: string
  days: number[]
  startTime: string
  endTime: string
}

/** What paging reads of a user's notification preferences (the product-users surface owns them). */
export interface PagingPreferences {
  channels: {
    email: { enabled: boolean; address: string | null }
    sms: { enabled: boolean; phoneNumber: string | null }
    voice: { enabled: boolean; phoneNumber: string | null }
    push: { enabled: boolean }
  }
  priorities: Record<string, PagingChannel[]>
  /** Per urgency, channels with delays; null: `priorities` pages at once. */
  rules: Record<Urgency, Array<{ channel: PagingChannel; delayMinutes: number }>> | null
  quietHours: { enabled: boolean; start: string; end: string; timeZone: string; bypassPriorities: string[] }
  /** Whether an alert that paged them is told when it resolves (paging/resolved-notices.ts). */
  whenResolved: boolean
}

/** The product-users surface's read of preferences, wired in by the service. */
export type PreferencesReader = (db: Executor, userIds: string[]) => Promise<Map<string, PagingPreferences>>

const minutesOf = (clock: string) => {
  const [hour = 0, minute = 0] = clock.split(':').map(Number)
  return hour * 60 + minute
}

/** Whether `at` falls in the quiet hours, on the user's clock (a window past midnight wraps). */
export function inQuietHours(quiet: PagingPreferences['quietHours'], at: Date): boolean {
  const local = DateTime.fromJSDate(at, { zone: quiet.timeZone })
  const now = local.hour * 60 + local.minute
  const [start, end] = [minutesOf(quiet.start), minutesOf(quiet.end)]
  return start < end ? now >= start && now < end : now >= start || now < end
}

/** Whether `at` is within the support hours (a window past midnight belongs to the day it starts). */
export function withinSupportHours(hours: SupportHours, at: Date): boolean {
  const local = DateTime.fromJSDate(at, { zone: hours.timeZone })
  const now = local.hour * 60 + local.minute
  const [start, end] = [minutesOf(hours.startTime), minutesOf(hours.endTime)]
  if (start < end) return hours.days.includes(local.weekday) && now >= start && now < end
  // Past midnight: the late part belongs to today, the early part to yesterday.
  if (now >= start) return hours.days.includes(local.weekday)
  return now < end && hours.days.includes(local.minus({ days: 1 }).weekday)
}

/**
 * An alert's urgency, as PagerDuty names it: P1 and P2 are high, unless their service has support
 * hours and this is outside them; the rest are low.
 */
export function urgencyOf(priority: string, supportHours: SupportHours | undefined, at: Date): Urgency {
  if (priority !== 'P1' && priority !== 'P2') return 'low'
  return supportHours && !withinSupportHours(supportHours, at) ? 'low' : 'high'
}

/** What pages a person: channels now, channels later (while unacknowledged), or why nothing does. */
export interface PagingPlan {
  now: PagingChannel[]
  later: Array<{ channel: PagingChannel; delayMinutes: number }>
  reason?: string
}

/**
 * How a person is paged for an alert: by their notification rules for its urgency (each channel
 * at its delay) when they have rules, else by the channels its priority routes to, at once. Quiet
 * hours hold back a priority that does not bypass them, and a disabled channel pages nothing.
 */
export function planFor(preferences: PagingPreferences, priority: string, urgency: Urgency, at: Date): PagingPlan {
  if (!preferences.rules) return { ...channelsFor(preferences, priority, at), later: [] }
  const quiet = preferences.quietHours
  if (quiet.enabled && !quiet.bypassPriorities.includes(priority) && inQuietHours(quiet, at)) {
    return {
      now: [],
      later: [],
      reason: `quiet hours (${quiet.start} to ${quiet.end} ${quiet.timeZone}); ${priority} does not bypass them`,
    }
  }
  const rules = preferences.rules[urgency].filter((rule) => preferences.channels[rule.channel].enabled)
  const now = rules.filter((rule) => rule.delayMinutes === 0).map((rule) => rule.channel)
  const later = rules.filter((rule) => rule.delayMinutes > 0)
  return rules.length > 0 ? { now, later } : { now, later, reason: `no enabled channel in the ${urgency}-urgency notification rules` }
}

/**
 * The channels that page a user for an alert of this priority now: the ones the priority routes
 * to and that are enabled, in the order the user listed them. During quiet hours a priority that
 * does not bypass them reaches no channel, and the reason is answered so it can be recorded.
 */
function channelsFor(preferences: PagingPreferences, priority: string, at: Date): { now: PagingChannel[]; reason?: string } {
  const quiet = preferences.quietHours
  if (quiet.enabled && !quiet.bypassPriorities.includes(priority) && inQuietHours(quiet, at)) {
    return { now: [], reason: `quiet hours (${quiet.start} to ${quiet.end} ${quiet.timeZone}); ${priority} does not bypass them` }
  }
  const channels = (preferences.priorities[priority] ?? []).filter((channel) => preferences.channels[channel].enabled)
  return channels.length > 0 ? { now: channels } : { now: channels, reason: `no enabled channel is chosen for ${priority} alerts` }
}

/** The product-users surface's read of verified contact methods (e-mail addresses, phone numbers), wired in by the service. */
export interface ContactReader {
  /** Each user's verified addresses (e-mail) or numbers (SMS, voice) for the channel, oldest first. */
  verifiedAddressesOf(db: Executor, userIds: string[], channel: 'email' | 'sms' | 'voice'): Promise<Map<string, string[]>>
  /** Whether the number is one of the user's verified SMS numbers. */
  hasVerifiedPhone(db: Executor, userId: string, phone: string): Promise<boolean>
}

/** The product-users surface's read of web-push subscriptions (every device a person subscribed), wired in by the service. */
export type PushReader = (db: Executor, userIds: string[]) => Promise<Map<string, WebPushSubscription[]>>
