import type { Executor } from '@svc/db'
import { emailsOf } from '../people.js'
import { overridesBetween, schedulesByIds, schedulesOfUser, storedLayers, type ScheduleRow } from './queries.js'
import { finalShifts, onCallAt, type Layer, type Shift } from './rotation.js'

const DAY = 86_400_000
/** How far either side of a moment its shift's bounds are looked for. */
export const ON_CALL_REACH_DAYS = 31

// The stored layers are the validated request body (schemas.ts), written whole.
const layersOf = (schedule: Pick<ScheduleRow, 'layers'>): Layer[] => storedLayers(schedule.layers)

async function overridesOf(db: Executor, organizationId: string, scheduleId: string, from: Date, to: Date) {
  const rows = await overridesBetween(db, organizationId, scheduleId, from, to)
  return rows.map((row) => ({ userId: row.userId, start: row.startsAt, end: row.endsAt }))
}

async function withEmails(db: Executor, shifts: Shift[]) {
  const emails = await emailsOf(db, [...new Set(shifts.map((shift) => shift.userId))])
  return shifts.map((shift) => ({
    userId: shift.userId,
    email: emails.get(shift.userId) ?? '',
    start: shift.start.toISOString(),
    end: shift.end.toISOString(),
  }))
}

/** The schedule's final shifts in [from, to), each with the person's e-mail. */
export async function scheduleShifts(db: Executor, organizationId: string, schedule: ScheduleRow, from: Date, to: Date) {
  const overrides = await overridesOf(db, organizationId, schedule.id, from, to)
  return withEmails(db, finalShifts(layersOf(schedule), overrides, schedule.timeZone, from, to))
}

/** Who is on call at `at`, with the merged shift they are in; undefined when nobody is. */
export async function scheduleOnCall(db: Executor, organizationId: string, schedule: ScheduleRow, at: Date) {
  const reach = ON_CALL_REACH_DAYS * DAY
  const overrides = await overridesOf(db, organizationId, schedule.id, new Date(at.getTime() - reach), new Date(at.getTime() + reach))
  const shift = onCallAt(layersOf(schedule), overrides, schedule.timeZone, at, ON_CALL_REACH_DAYS)
  return shift && (await withEmails(db, [shift]))[0]
}

/** For paging: the user on call now in each given schedule of the organization that has one. */
export async function onCallUsers(db: Executor, organizationId: string, scheduleIds: string[], at: Date): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  for (const schedule of await schedulesByIds(db, organizationId, scheduleIds)) {
    const overrides = await overridesOf(db, organizationId, schedule.id, at, new Date(at.getTime() + 1))
    const [shift] = finalShifts(layersOf(schedule), overrides, schedule.timeZone, at, new Date(at.getTime() + 1))
    if (shift) found.set(schedule.id, shift.userId)
  }
  return found
}

/** A user's own shifts in [from, to) across every schedule of every organization they are active in. */
export async function userShifts(db: Executor, userId: string, from: Date, to: Date) {
  const found: Array<Shift & { scheduleId: string; scheduleName: string; organizationName: string }> = []
  for (const schedule of await schedulesOfUser(db, userId)) {
    const overrides = await overridesOf(db, schedule.organizationId, schedule.id, from, to)
    for (const shift of finalShifts(layersOf(schedule), overrides, schedule.timeZone, from, to)) {
      if (shift.userId === userId) {
        found.push({ ...shift, scheduleId: schedule.id, scheduleName: schedule.name, organizationName: schedule.organizationName })
      }
    }
  }
  return found.sort((a, b) => a.start.getTime() - b.start.getTime())
}
