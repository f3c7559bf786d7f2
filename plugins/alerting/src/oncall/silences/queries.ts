import { sql } from 'kysely'
import { jsonb, paged, type Executor, type Page } from '@svc/db'

const silenceColumns = [
  'id',
  'comment',
  'matchers',
  'startsAt',
  'endsAt',
  'createdBy',
  'statusMaintenanceId',
  'createdAt',
  'updatedAt',
] as const
export type SilenceState = 'active' | 'pending' | 'expired'

function silencesOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.silences').where('organizationId', '=', organizationId)
}

/** Silences, latest ending first; `state` keeps those active, not started yet, or over at `now`. */
export async function listSilences(db: Executor, organizationId: string, state: SilenceState | undefined, now: Date, page: Page) {
  let base = silencesOf(db, organizationId)
  if (state === 'active') base = base.where('startsAt', '<=', now).where('endsAt', '>', now)
  if (state === 'pending') base = base.where('startsAt', '>', now)
  if (state === 'expired') base = base.where('endsAt', '<=', now)
  return paged(base, (rows) => rows.select(silenceColumns).orderBy('endsAt', 'desc').orderBy('id'), page)
}

export async function findSilence(db: Executor, organizationId: string, silenceId: string, forUpdate = false) {
  const query = silencesOf(db, organizationId).select(silenceColumns).where('id', '=', silenceId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type SilenceRow = NonNullable<Awaited<ReturnType<typeof findSilence>>>

/** The organization's silences in force at `now`, the one ending last first. */
export async function silencesInForce(db: Executor, organizationId: string, now: Date) {
  return silencesOf(db, organizationId)
    .select(silenceColumns)
    .where('startsAt', '<=', now)
    .where('endsAt', '>', now)
    .orderBy('endsAt', 'desc')
    .orderBy('id')
    .execute()
}

/** When a silence ends, for the job that lets go of what it held: undefined once it is deleted. */
export async function silenceEnd(db: Executor, silenceId: string) {
  return db.selectFrom('divinux.silences').select(['endsAt']).where('id', '=', silenceId).executeTakeFirst()
}

export async function insertSilence(
  db: Executor,
  silence: { organizationId: string; comment: string; matchers: object; startsAt: Date; endsAt: Date; createdBy: string },
): Promise<SilenceRow> {
  return db
    .insertInto('divinux.silences')
    .values({ ...silence, matchers: jsonb(silence.matchers) })
    .returning(silenceColumns)
    .executeTakeFirstOrThrow()
}

export async function updateSilence(
  db: Executor,
  organizationId: string,
  silenceId: string,
  change: { comment?: string; matchers?: object; startsAt?: Date; endsAt?: Date },
) {
  const { matchers, ...rest } = change
  return db
    .updateTable('divinux.silences')
    .set({ ...rest, ...(matchers ? { matchers: jsonb(matchers) } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', silenceId)
    .returning(silenceColumns)
    .executeTakeFirst()
}

export async function deleteSilence(db: Executor, organizationId: string, silenceId: string) {
  return db
    .deleteFrom('divinux.silences')
    .where('organizationId', '=', organizationId)
    .where('id', '=', silenceId)
    .returning(silenceColumns)
    .executeTakeFirst()
}
