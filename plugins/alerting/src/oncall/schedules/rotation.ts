import { DateTime } from 'luxon'

export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const
export type Weekday = (typeof weekdays)[number]
export type TurnUnit = 'hours' | 'days' | 'weeks'

/**
 * One layer of a schedule, as PagerDuty and Grafana OnCall have them: the users take turns of
 * `turn` from `start` at `handoffTime` (the schedule's zone), in order, round and round. With a
 * restriction the layer covers only its windows: each listed day from `from` to `to` (past
 * midnight into the next day when `to` is not after `from`).
 */
export interface Layer {
  name: string
  start: string
  handoffTime: string
  turn: { length: number; unit: TurnUnit }
  users: string[]
  restriction: { days: Weekday[]; from: string; to: string } | null
}

export interface Override {
  userId: string
  start: Date
  end: Date
}

/** A span of time with the one person on call in it; `end` is exclusive. */
export interface Shift {
  userId: string
  start: Date
  end: Date
}

interface Span {
  start: number
  end: number
}

const clock = (time: string) => {
  const [hour = 0, minute = 0] = time.split(':').map(Number)
  return { hour, minute }
}

/** The moment a local date and clock time name in `zone`; a time skipped by daylight saving moves forward, as a wall clock does. */
function localMoment(zone: string, date: DateTime, time: string): DateTime {
  return DateTime.fromObject({ year: date.year, month: date.month, day: date.day, ...clock(time) }, { zone })
}

/**
 * Where turn `k` of a layer begins. Days and weeks are calendar days in the schedule's zone, so a
 * weekly hand-off at 09:00 stays at 09:00 local across daylight-saving changes; hours are elapsed
 * hours (a 12-hour turn is 12 hours long, even on the night the clocks change).
 */
function turnStart(origin: DateTime, layer: Layer, k: number): DateTime {
  const { length, unit } = layer.turn
  return origin.plus({ [unit]: k * length })
}

/** The first turn that may still be running at `from`: an estimate from the elapsed time, walked back while it starts later. */
function firstTurnAt(origin: DateTime, layer: Layer, from: number): number {
  const hours = { hours: 1, days: 24, weeks: 168 }[layer.turn.unit] * layer.turn.length
  let k = Math.max(0, Math.floor((from - origin.toMillis()) / (hours * 3_600_000)) - 1)
  while (k > 0 && turnStart(origin, layer, k).toMillis() > from) k -= 1
  while (turnStart(origin, layer, k + 1).toMillis() <= from) k += 1
  return k
}

/** The restriction's windows that overlap [from, to), in the zone's local days. */
function restrictionWindows(restriction: NonNullable<Layer['restriction']>, zone: string, from: number, to: number): Span[] {
  const windows: Span[] = []
  const wraps = restriction.to <= restriction.from
  let day = DateTime.fromMillis(from, { zone }).startOf('day').minus({ days: 1 })
  const last = DateTime.fromMillis(to, { zone }).startOf('day')
  for (; day <= last; day = day.plus({ days: 1 })) {
    if (!restriction.days.includes(weekdays[day.weekday - 1] as Weekday)) continue
    const start = localMoment(zone, day, restriction.from).toMillis()
    const end = localMoment(zone, wraps ? day.plus({ days: 1 }) : day, restriction.to).toMillis()
    if (end > from && start < to) windows.push({ start, end })
  }
  return windows
}

/** Who a layer puts on call in [from, to), turn by turn, cut to its restriction windows. */
export function layerShifts(layer: Layer, zone: string, from: Date, to: Date): Shift[] {
  const origin = localMoment(zone, DateTime.fromISO(layer.start, { zone }), layer.handoffTime)
  const [lower, upper] = [Math.max(from.getTime(), origin.toMillis()), to.getTime()]
  const shifts: Shift[] = []
  if (lower >= upper || layer.users.length === 0) return shifts
  const windows = layer.restriction ? restrictionWindows(layer.restriction, zone, lower, upper) : [{ start: lower, end: upper }]
  for (let k = firstTurnAt(origin, layer, lower); ; k += 1) {
    const start = turnStart(origin, layer, k).toMillis()
    if (start >= upper) break
    const end = turnStart(origin, layer, k + 1).toMillis()
    const userId = layer.users[k % layer.users.length] as string
    for (const window of windows) {
      const from = Math.max(start, window.start, lower)
      const until = Math.min(end, window.end, upper)
      if (from < until) shifts.push({ userId, start: new Date(from), end: new Date(until) })
    }
  }
  return shifts
}

/**
 * The final schedule in [from, to): later layers above earlier ones, overrides above all, a
 * person's adjacent shifts merged into one. Times nobody covers are simply absent.
 */
export function finalShifts(layers: Layer[], overrides: Override[], zone: string, from: Date, to: Date): Shift[] {
  // Highest first: overrides, then the last layer down to the first.
  const levels = [
    overrides.filter((override) => override.end > from && override.start < to).sort((a, b) => a.start.getTime() - b.start.getTime()),
    ...layers.map((layer) => layerShifts(layer, zone, from, to)).reverse(),
  ]
  const cuts = new Set<number>([from.getTime(), to.getTime()])
  for (const level of levels) {
    for (const shift of level) {
      cuts.add(Math.max(shift.start.getTime(), from.getTime()))
      cuts.add(Math.min(shift.end.getTime(), to.getTime()))
    }
  }
  const moments = [...cuts].sort((a, b) => a - b)
  const cursors = levels.map(() => 0)
  const merged: Shift[] = []
  for (let index = 0; index + 1 < moments.length; index += 1) {
    const [start, end] = [moments[index] as number, moments[index + 1] as number]
    let userId: string | undefined
    for (const [level, shifts] of levels.entries()) {
      let cursor = cursors[level] as number
      while (cursor < shifts.length && (shifts[cursor] as Shift).end.getTime() <= start) cursor += 1
      cursors[level] = cursor
      const shift = shifts[cursor]
      if (shift && shift.start.getTime() <= start) {
        userId = shift.userId
        break
      }
    }
    if (!userId) continue
    const previous = merged.at(-1)
    if (previous && previous.userId === userId && previous.end.getTime() === start) previous.end = new Date(end)
    else merged.push({ userId, start: new Date(start), end: new Date(end) })
  }
  return merged
}

/** Who is on call at one moment, and the merged shift they are in (looked for up to `reachDays` either side). */
export function onCallAt(layers: Layer[], overrides: Override[], zone: string, at: Date, reachDays = 31): Shift | undefined {
  const reach = reachDays * 86_400_000
  const shifts = finalShifts(layers, overrides, zone, new Date(at.getTime() - reach), new Date(at.getTime() + reach))
  return shifts.find((shift) => shift.start <= at && shift.end > at)
}
