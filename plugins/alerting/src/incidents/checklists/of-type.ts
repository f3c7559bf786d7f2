import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { findType, storedTypeRoles } from '../shaping/queries.js'
import { listChecklists } from './queries.js'

// What roles and checklists an incident has (decision 0031, "Roles per type"): an incident type
// that lists roles gives its incidents those roles (and commander, every incident's), each with
// the type's tasks or else the organization's checklist of the role; an incident of no type, or
// of a type that lists none, has every role and the organization's checklists.

/** The roles the incident's type allows besides commander; undefined when any role is allowed. */
async function typeRolesOf(db: Executor, organizationId: string, incident: { typeId: string | null }) {
  const type = incident.typeId ? await findType(db, organizationId, incident.typeId) : undefined
  const roles = type ? storedTypeRoles(type.roles) : []
  return roles.length > 0 ? { name: type!.name, roles } : undefined
}

/** The incident's checklists, in order: the type's roles (commander first), or the organization's. */
export async function checklistsOfIncident(
  db: Executor,
  organizationId: string,
  incident: { typeId: string | null },
): Promise<Array<{ role: string; tasks: string[] }>> {
  const organization = await listChecklists(db, organizationId)
  const typed = await typeRolesOf(db, organizationId, incident)
  if (!typed) return organization
  const roles = typed.roles.some((entry) => entry.role === 'commander') ? typed.roles : [{ role: 'commander' }, ...typed.roles]
  return roles.flatMap(({ role, tasks }: { role: string; tasks?: string[] }) => {
    const own = tasks ?? organization.find((checklist) => checklist.role === role)?.tasks
    return own ? [{ role, tasks: own }] : []
  })
}

/** Refuses a role the incident's type does not give its incidents (400 naming `field`). */
export async function checkRoleOfIncident(
  db: Executor,
  organizationId: string,
  incident: { typeId: string | null },
  role: string,
  field: string,
  context: 'body' | 'params' = 'params',
): Promise<void> {
  if (role === 'commander') return
  const typed = await typeRolesOf(db, organizationId, incident)
  if (typed && !typed.roles.some((entry) => entry.role === role))
    throw invalidField(
      field,
      `is not a role of ${typed.name} incidents: ${['commander', ...typed.roles.map((entry) => entry.role).filter((name) => name !== 'commander')].join(', ')}`,
      context,
    )
}
