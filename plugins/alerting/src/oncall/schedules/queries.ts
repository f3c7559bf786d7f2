import { sql } from 'kysely'
import { containing, jsonb, jsonColumn, paged, type Executor, type Page } from '@svc/db'
import type { LayerBody } from './schemas.js'

/** A schedule's stored layers: the validated request body, written whole. */
export const storedLayers = jsonColumn<LayerBody[]>()

const scheduleColumns = ['s.id', 's.name', 's.description', 's.timeZone', 's.layers', 's.createdBy', 's.createdAt', 's.updatedAt'] as const
const returnedColumns = ['id', 'name', 'description', 'timeZone', 'layers', 'createdBy', 'createdAt', 'updatedAt'] as const

function schedulesOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.schedules as s').where('s.organizationId', '=', organizationId)
}

/** Schedules by name (then id); `q` matches names containing it. */
export async function listSchedules(db: Executor, organizationId: string, q: string | undefined, page: Page) {
  const base = q ? schedulesOf(db, organizationId).where('s.name', 'ilike', containing(q)) : schedulesOf(db, organizationId)
  return paged(
    base,
    (rows) =>
      rows
        .select(scheduleColumns)
        .orderBy(sql`lower(s.name)`)
        .orderBy('s.id'),
    page,
  )
}

export async function findSchedule(db: Executor, organizationId: string, scheduleId: string, forUpdate = false) {
  const query = schedulesOf(db, organizationId).select(scheduleColumns).where('s.id', '=', scheduleId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type ScheduleRow = NonNullable<Awaited<ReturnType<typeof findSchedule>>>

/** The given schedules of the organization (the ones it has), for paging their on-call users. */
export async function schedulesByIds(db: Executor, organizationId: string, scheduleIds: string[]) {
  if (scheduleIds.length === 0) return []
  return schedulesOf(db, organizationId).select(scheduleColumns).where('s.id', 'in', scheduleIds).execute()
}

/** Whether a schedule of this name (any letter case) exists in the organization, other than `exceptId`. */
export async function scheduleNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = schedulesOf(db, organizationId)
    .select('s.id')
    .where(sql`lower(s.name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('s.id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export async function insertSchedule(
  db: Executor,
  schedule: { organizationId: string; name: string; description: string | null; timeZone: string; layers: unknown[]; createdBy: string },
): Promise<ScheduleRow> {
  return db
    .insertInto('divinux.schedules')
    .values({ ...schedule, layers: jsonb(schedule.layers) })
    .returning(returnedColumns)
    .executeTakeFirstOrThrow()
}

export async function updateSchedule(
  db: Executor,
  organizationId: string,
  scheduleId: string,
  change: { name?: string; description?: string | null; timeZone?: string; layers?: unknown[] },
) {
  const { layers, ...rest } = change
  return db
    .updateTable('divinux.schedules')
    .set({ ...rest, ...(layers ? { layers: jsonb(layers) } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', scheduleId)
    .returning(returnedColumns)
    .executeTakeFirst()
}

export async function deleteSchedule(db: Executor, organizationId: string, scheduleId: string) {
  return db
    .deleteFrom('divinux.schedules')
    .where('organizationId', '=', organizationId)
    .where('id', '=', scheduleId)
    .returning('id')
    .executeTakeFirst()
}

const overrideColumns = ['o.id', 'o.userId', 'u.email', 'o.startsAt', 'o.endsAt', 'o.createdBy', 'o.createdAt'] as const

/** A schedule's overrides that overlap [from, to) (either end open), earliest first. */
export async function overridesBetween(db: Executor, organizationId: string, scheduleId: string, from?: Date, to?: Date) {
  let query = db
    .selectFrom('divinux.scheduleOverrides as o')
    .innerJoin('core.users as u', 'u.id', 'o.userId')
    .select(overrideColumns)
    .where('o.organizationId', '=', organizationId)
    .where('o.scheduleId', '=', scheduleId)
  if (from) query = query.where('o.endsAt', '>', from)
  if (to) query = query.where('o.startsAt', '<', to)
  return query.orderBy('o.startsAt').orderBy('o.id').execute()
}

export type OverrideRow = Awaited<ReturnType<typeof overridesBetween>>[number]

export async function insertOverride(
  db: Executor,
  override: { organizationId: string; scheduleId: string; userId: string; startsAt: Date; endsAt: Date; createdBy: string },
) {
  const { id } = await db.insertInto('divinux.scheduleOverrides').values(override).returning('id').executeTakeFirstOrThrow()
  return id
}

export async function deleteOverride(db: Executor, organizationId: string, scheduleId: string, overrideId: string) {
  return db
    .deleteFrom('divinux.scheduleOverrides')
    .where('organizationId', '=', organizationId)
    .where('scheduleId', '=', scheduleId)
    .where('id', '=', overrideId)
    .returning(['id', 'userId', 'startsAt', 'endsAt'])
    .executeTakeFirst()
}

/** Of the given ids, those naming schedules of the organization. */
export async function schedulesAmong(db: Executor, organizationId: string, scheduleIds: string[]): Promise<Set<string>> {
  if (scheduleIds.length === 0) return new Set()
  const rows = await schedulesOf(db, organizationId).select('s.id').where('s.id', 'in', scheduleIds).execute()
  return new Set(rows.map((row) => row.id))
}

/**
 * The schedules that may put a user on call: those whose layers rotate them or that have an
 * override for them, in the organizations where they are an active member.
 */
export async function schedulesOfUser(db: Executor, userId: string) {
  const inRotation = JSON.stringify([{ users: [userId] }])
  return db
    .selectFrom('divinux.schedules as s')
    .innerJoin('core.organizationMembers as m', (join) =>
      join.onRef('m.organizationId', '=', 's.organizationId').on('m.userId', '=', userId),
    )
    .innerJoin('core.organizations as o', 'o.id', 's.organizationId')
    .select([...scheduleColumns, 's.organizationId', 'o.name as organizationName'])
    .where('m.suspendedAt', 'is', null)
    .where('m.joinedAt', 'is not', null)
    .where((eb) =>
      eb.or([
        eb(sql<boolean>`s.layers @> ${inRotation}::jsonb`, '=', true),
        eb.exists(
          eb
            .selectFrom('divinux.scheduleOverrides as v')
            .select('v.id')
            .whereRef('v.scheduleId', '=', 's.id')
            .where('v.userId', '=', userId),
        ),
      ]),
    )
    .orderBy('s.id')
    .execute()
}
