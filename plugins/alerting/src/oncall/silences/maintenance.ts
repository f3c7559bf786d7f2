import { sql } from 'kysely'
import { jsonb, type Executor } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { scheduleSilenceEnd } from './ending.js'

/**
 * What a status page maintenance quiets while it lasts (decision 0015, "Maintenance quiets
 * monitoring"): the alerts of its components' services, and those of the checks its components
 * follow. `over`: it completed, was cancelled or deleted, and quiets nothing from now on.
 */
export interface MaintenanceQuiet {
  organizationId: string
  maintenanceId: string
  name: string
  services: string[]
  checkIds: string[]
  startsAt: Date
  endsAt: Date
  over: boolean
}

type Matchers = { services: string[] } | { labels: Record<string, string> }

/** The label a synthetic check's alert names its check by (alerts/check-alerts.ts). */
const CHECK_LABEL = 'checkId'

/** One silence for the services, one per check (a silence's matchers must all hold, so a check's label cannot join the services'). */
function wantedMatchers(quiet: MaintenanceQuiet): Matchers[] {
  if (quiet.over) return []
  const services = [...new Set(quiet.services)].sort()
  return [
    ...(services.length > 0 ? [{ services }] : []),
    ...[...new Set(quiet.checkIds)].sort().map((checkId) => ({ labels: { [CHECK_LABEL]: checkId } })),
  ]
}

/**
 * Keeps a maintenance's silences in step with it, in the caller's transaction: the silences it
 * wants exist with its window, those it no longer wants end now (a silence not started yet is
 * removed), and each change of an end is followed by the job that lets go of what the silence
 * held (paging/escalator.ts), as for any silence. Silences a person made are never touched.
 */
export async function quietForMaintenance(db: Executor, jobs: JobQueue, quiet: MaintenanceQuiet): Promise<void> {
  const existing = await db
    .selectFrom('divinux.silences')
    .select(['id', 'matchers', 'startsAt', 'endsAt', 'comment'])
    .where('organizationId', '=', quiet.organizationId)
    .where('statusMaintenanceId', '=', quiet.maintenanceId)
    .forUpdate()
    .execute()
  const wanted = new Map(wantedMatchers(quiet).map((matchers) => [JSON.stringify(matchers), matchers]))
  const comment = `Maintenance: ${quiet.name}`.slice(0, 500)
  const now = new Date()
  for (const silence of existing) {
    const key = JSON.stringify(silence.matchers)
    if (wanted.delete(key)) {
      const moved = silence.startsAt.getTime() !== quiet.startsAt.getTime() || silence.endsAt.getTime() !== quiet.endsAt.getTime()
      if (!moved && silence.comment === comment) continue
      await db
        .updateTable('divinux.silences')
        .set({ startsAt: quiet.startsAt, endsAt: quiet.endsAt, comment, updatedAt: sql<Date>`now()` })
        .where('id', '=', silence.id)
        .execute()
      if (silence.endsAt.getTime() !== quiet.endsAt.getTime()) await scheduleSilenceEnd(jobs, db, silence.id, quiet.endsAt)
    } else if (silence.startsAt >= now) {
      await db.deleteFrom('divinux.silences').where('id', '=', silence.id).execute()
    } else if (silence.endsAt > now) {
      await db
        .updateTable('divinux.silences')
        .set({ endsAt: now, updatedAt: sql<Date>`now()` })
        .where('id', '=', silence.id)
        .execute()
      await scheduleSilenceEnd(jobs, db, silence.id, now)
    }
  }
  if (quiet.endsAt <= now) return
  for (const matchers of wanted.values()) {
    const row = await db
      .insertInto('divinux.silences')
      .values({
        organizationId: quiet.organizationId,
        comment,
        matchers: jsonb(matchers),
        startsAt: quiet.startsAt,
        endsAt: quiet.endsAt,
        createdBy: null,
        statusMaintenanceId: quiet.maintenanceId,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    await scheduleSilenceEnd(jobs, db, row.id, quiet.endsAt)
  }
}
