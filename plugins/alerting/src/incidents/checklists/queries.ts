import { sql } from 'kysely'
import type { Executor } from '@svc/db'

// The checklist tables are the incidents module's; every query is scoped by organization in its own WHERE.

export async function listChecklists(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.incidentChecklists')
    .select(['role', 'tasks', 'updatedBy', 'updatedAt'])
    .where('organizationId', '=', organizationId)
    .orderBy('role')
    .execute()
}

export async function findChecklist(db: Executor, organizationId: string, role: string) {
  return db
    .selectFrom('divinux.incidentChecklists')
    .select(['role', 'tasks', 'updatedBy', 'updatedAt'])
    .where('organizationId', '=', organizationId)
    .where('role', '=', role)
    .executeTakeFirst()
}

export type ChecklistRow = NonNullable<Awaited<ReturnType<typeof findChecklist>>>

export async function putChecklist(db: Executor, organizationId: string, role: string, tasks: string[], userId: string) {
  return db
    .insertInto('divinux.incidentChecklists')
    .values({ organizationId, role, tasks, updatedBy: userId })
    .onConflict((oc) => oc.columns(['organizationId', 'role']).doUpdateSet({ tasks, updatedBy: userId, updatedAt: sql<Date>`now()` }))
    .returning(['role', 'tasks', 'updatedBy', 'updatedAt'])
    .executeTakeFirstOrThrow()
}

export async function deleteChecklist(db: Executor, organizationId: string, role: string) {
  const deleted = await db
    .deleteFrom('divinux.incidentChecklists')
    .where('organizationId', '=', organizationId)
    .where('role', '=', role)
    .executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0
}

/** The incident's ticked tasks, with who ticked them. */
export async function ticksOf(db: Executor, organizationId: string, incidentId: string) {
  return db
    .selectFrom('divinux.incidentTaskTicks as k')
    .leftJoin('core.users as u', 'u.id', 'k.doneBy')
    .select(['k.role', 'k.task', 'k.doneBy', 'u.email', 'k.doneAt'])
    .where('k.organizationId', '=', organizationId)
    .where('k.incidentId', '=', incidentId)
    .execute()
}

/** Ticks a task; answers false when it was ticked already. */
export async function tick(db: Executor, tick: { organizationId: string; incidentId: string; role: string; task: string; doneBy: string }) {
  const rows = await db
    .insertInto('divinux.incidentTaskTicks')
    .values(tick)
    .onConflict((oc) => oc.doNothing())
    .returning('task')
    .execute()
  return rows.length > 0
}

/** Unticks a task; answers false when it was not ticked. */
export async function untick(db: Executor, organizationId: string, incidentId: string, role: string, task: string) {
  const deleted = await db
    .deleteFrom('divinux.incidentTaskTicks')
    .where('organizationId', '=', organizationId)
    .where('incidentId', '=', incidentId)
    .where('role', '=', role)
    .where('task', '=', task)
    .executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0
}
