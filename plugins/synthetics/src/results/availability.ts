import type { Executor } from '@svc/db'
import { availabilityFromRollups, availabilityFromRuns } from '../queries/runs.js'

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000

/** The maintenance windows of status page components in [from, to) (the status pages' read, wired in by the service). */
export type MaintenanceWindowsReader = (
  db: Executor,
  organizationId: string,
  componentIds: string[],
  from: Date,
  to: Date,
) => Promise<Array<{ from: Date; to: Date }>>

export interface AvailabilityOptions {
  retentionDays: number
  maintenanceWindows: MaintenanceWindowsReader
}

export const percentUp = (runs: number, failures: number) => (runs === 0 ? null : Math.round(((runs - failures) / runs) * 100_000) / 1000)

/**
 * A check's availability over [from, to): runs not failing, leaving out the maintenance windows
 * of the status page components it is linked to. Raw results where they are kept, hourly
 * roll-ups before that (an hour a window touches is left out whole).
 */
export async function availabilityOf(
  db: Executor,
  check: { id: string; organizationId: string; statusComponentIds: string[] },
  from: Date,
  to: Date,
  options: AvailabilityOptions,
) {
  const windows = check.statusComponentIds.length
    ? await options.maintenanceWindows(db, check.organizationId, check.statusComponentIds, from, to)
    : []
  const cutoff = new Date(Math.max(from.getTime(), Date.now() - options.retentionDays * DAY_MS))
  const hourCutoff = new Date(Math.floor(cutoff.getTime() / HOUR_MS) * HOUR_MS)
  const recent = await availabilityFromRuns(db, check.id, hourCutoff > from ? hourCutoff : from, to, windows)
  const older = hourCutoff > from ? await availabilityFromRollups(db, check.id, from, hourCutoff, windows) : { runs: 0, failures: 0 }
  const runs = recent.runs + older.runs
  const failures = recent.failures + older.failures
  return { runs, failures, availability: percentUp(runs, failures), windows }
}
