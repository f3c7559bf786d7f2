import type { ComponentStatus } from '../model.js'

/** A partial outage counts as this share of downtime (Statuspage weighs it the same way); a major outage counts fully. */
export const PARTIAL_OUTAGE_WEIGHT = 0.3
export const UPTIME_DAYS = 90
const DAY_MS = 86_400_000

export interface StatusChange {
  status: ComponentStatus
  changedAt: Date
}

export interface UptimeDay {
  /** The UTC day, YYYY-MM-DD. */
  date: string
  /** 0–100 with three decimals; null for a day the component did not exist or spent wholly in maintenance. */
  uptime: number | null
  majorOutageSeconds: number
  partialOutageSeconds: number
  degradedSeconds: number
  maintenanceSeconds: number
}

export interface Uptime {
  uptimePercentage: number | null
  days: UptimeDay[]
}

const percent = (share: number) => Math.round(share * 100_000) / 1000

/**
 * A component's uptime over the last `UPTIME_DAYS` UTC days (today included, up to `now`), from
 * its status changes in order (the first may be older than the window: it is the status the
 * window starts in). Time under maintenance is left out of the measure; degraded performance
 * counts as up; days before the component's first day are no data, not downtime.
 */
export function uptimeOf(changes: StatusChange[], now: Date, days = UPTIME_DAYS): Uptime {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS
  return uptimeOver(changes, today - (days - 1) * DAY_MS, now.getTime(), today)
}

/** The same over any period [from, to), by UTC day, for reports: the first and last days are partial. */
export function uptimeBetween(changes: StatusChange[], from: Date, to: Date): Uptime {
  const firstDay = Math.floor(from.getTime() / DAY_MS) * DAY_MS
  const lastDay = Math.floor((to.getTime() - 1) / DAY_MS) * DAY_MS
  return uptimeOver(changes, firstDay, to.getTime(), lastDay, from.getTime())
}

function uptimeOver(changes: StatusChange[], firstDay: number, end: number, lastDay: number, start = firstDay): Uptime {
  const segments = changes.map((change, index) => ({
    status: change.status,
    from: change.changedAt.getTime(),
    to: changes[index + 1]?.changedAt.getTime() ?? end,
  }))
  // Statuspage measures whole days from a component's start date: the day it was created counts
  // from its midnight, up before it existed, so a 42-second outage an hour after creation reads
  // 99.9 %, not the 83 % of the minutes since. Days before that day have no data (null).
  const created = changes[0]?.changedAt.getTime()
  if (created !== undefined && created % DAY_MS !== 0)
    segments.unshift({ status: 'operational', from: Math.floor(created / DAY_MS) * DAY_MS, to: created })
  const totals = { measured: 0, down: 0 }
  const result: UptimeDay[] = []
  for (let day = firstDay; day <= lastDay; day += DAY_MS) {
    const seconds: Record<ComponentStatus, number> = {
      operational: 0,
      degraded_performance: 0,
      partial_outage: 0,
      major_outage: 0,
      under_maintenance: 0,
    }
    for (const segment of segments) {
      const overlap = Math.min(segment.to, day + DAY_MS, end) - Math.max(segment.from, day, start)
      if (overlap > 0) seconds[segment.status] += overlap / 1000
    }
    const measured = seconds.operational + seconds.degraded_performance + seconds.partial_outage + seconds.major_outage
    const down = seconds.major_outage + PARTIAL_OUTAGE_WEIGHT * seconds.partial_outage
    totals.measured += measured
    totals.down += down
    result.push({
      date: new Date(day).toISOString().slice(0, 10),
      uptime: measured > 0 ? percent(1 - down / measured) : null,
      majorOutageSeconds: Math.round(seconds.major_outage),
      partialOutageSeconds: Math.round(seconds.partial_outage),
      degradedSeconds: Math.round(seconds.degraded_performance),
      maintenanceSeconds: Math.round(seconds.under_maintenance),
    })
  }
  return { uptimePercentage: totals.measured > 0 ? percent(1 - totals.down / totals.measured) : null, days: result }
}
