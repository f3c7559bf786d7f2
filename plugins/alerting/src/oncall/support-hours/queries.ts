import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { SupportHours } from '../paging-plan.js'

const columns = ['service', 'timeZone', 'days', 'startTime', 'endTime', 'updatedBy', 'updatedAt'] as const

/** The service's support hours, if it has any. */
export async function supportHoursOf(db: Executor, organizationId: string, service: string): Promise<SupportHours | undefined> {
  return db
    .selectFrom('divinux.serviceSupportHours')
    .select(['timeZone', 'days', 'startTime', 'endTime'])
    .where('organizationId', '=', organizationId)
    .where('service', '=', service)
    .executeTakeFirst()
}

export async function listSupportHours(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.serviceSupportHours')
    .select(columns)
    .where('organizationId', '=', organizationId)
    .orderBy('service')
    .execute()
}

export type SupportHoursRow = Awaited<ReturnType<typeof listSupportHours>>[number]

export async function putSupportHours(
  db: Executor,
  row: { organizationId: string; service: string; timeZone: string; days: number[]; startTime: string; endTime: string; updatedBy: string },
) {
  const { organizationId: _organizationId, service: _service, ...change } = row
  return db
    .insertInto('divinux.serviceSupportHours')
    .values(row)
    .onConflict((conflict) => conflict.columns(['organizationId', 'service']).doUpdateSet({ ...change, updatedAt: sql<Date>`now()` }))
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export async function deleteSupportHours(db: Executor, organizationId: string, service: string) {
  return db
    .deleteFrom('divinux.serviceSupportHours')
    .where('organizationId', '=', organizationId)
    .where('service', '=', service)
    .returning(columns)
    .executeTakeFirst()
}
