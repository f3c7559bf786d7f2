import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { incidentAuditOf, incidentOrNotFound, timelineEntry } from '../common.js'
import type { Actor } from '../operations.js'
import { addTimeline, incidentRoles } from '../queries.js'
import { checklistsOfIncident } from './of-type.js'
import { ticksOf, tick, untick } from './queries.js'

/** The incident's checklist: each role the organization gave tasks, who holds it, and each task's state. */
export async function checklistOf(
  db: Executor,
  organizationId: string,
  incidentId: string,
  checklists: Array<{ role: string; tasks: string[] }>,
) {
  const roles = await incidentRoles(db, organizationId, incidentId)
  const ticks = await ticksOf(db, organizationId, incidentId)
  return checklists.map((checklist) => {
    const holder = roles.find((role) => role.role === checklist.role)
    return {
      role: checklist.role,
      holder: holder ? { userId: holder.userId, email: holder.email } : null,
      tasks: checklist.tasks.map((task, index) => {
        const ticked = ticks.find((candidate) => candidate.role === checklist.role && candidate.task === task)
        return {
          position: index + 1,
          task,
          done: ticked !== undefined,
          doneBy: ticked ? { userId: ticked.doneBy, email: ticked.email } : null,
          doneAt: ticked?.doneAt.toISOString() ?? null,
        }
      }),
    }
  })
}

/**
 * Ticks (or unticks) the task at `position` (1-based) of the role's checklist on the incident, from
 * the API or chat; on the timeline and audited. 404 for a role without a checklist on the incident (its type's, else the organization's) or a position
 * beyond it. Answers the task and whether anything changed.
 */
export async function setTaskDone(
  trx: Executor,
  actor: Actor,
  organizationId: string,
  incidentId: string,
  role: string,
  position: number,
  done: boolean,
): Promise<{ task: string; changed: boolean; reference: string }> {
  const incident = await incidentOrNotFound(trx, organizationId, incidentId, true)
  const checklist = (await checklistsOfIncident(trx, organizationId, incident)).find((candidate) => candidate.role === role)
  const task = checklist?.tasks[position - 1]
  if (!task) throw new NotFoundError(`task ${position} of the ${role} checklist`)
  const changed = done
    ? await tick(trx, { organizationId, incidentId: incident.id, role, task, doneBy: actor.userId })
    : await untick(trx, organizationId, incident.id, role, task)
  const reference = `INC-${incident.number}`
  if (!changed) return { task, changed, reference }
  await addTimeline(trx, [
    timelineEntry(organizationId, incident.id, actor.userId, done ? 'task_done' : 'task_undone', { role, task, position }),
  ])
  const { context, entry } = incidentAuditOf(actor.audit, organizationId, incident.id)
  await recordAudit(trx, context, { ...entry, action: done ? 'incident.task_done' : 'incident.task_undone', after: { role, task } })
  return { task, changed, reference }
}
