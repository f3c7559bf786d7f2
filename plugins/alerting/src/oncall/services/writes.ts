import type { Executor } from '@svc/db'
import { ConflictError, invalidField } from '@svc/http'
import { policiesAmong } from '../policies/queries.js'
import { teamsAmong } from '../teams/queries.js'
import { countEdges, DEPENDENCIES_PER_ORGANIZATION, setDependsOn } from './edges.js'
import { namesTaken, serviceIdsByKey, type ServiceFields, type ServiceRow } from './queries.js'

// The rules every write of a service keeps, whether a person sends it or a catalog is imported.

/** A service as its audit entries record it. */
export const audited = (row: ServiceFields, dependsOn: string[]) => ({
  key: row.key,
  name: row.name,
  ownerTeamId: row.ownerTeamId,
  escalationPolicyId: row.escalationPolicyId,
  tier: row.tier,
  tags: row.tags,
  links: row.links,
  aliases: row.aliases,
  dependsOn,
})

/**
 * Makes the service depend on the services `keys` name: each must be a service of the
 * organization other than itself (400 naming the key), and the organization keeps at most
 * DEPENDENCIES_PER_ORGANIZATION edges (409).
 */
export async function dependOn(db: Executor, organizationId: string, service: { id: string; key: string }, keys: string[], userId: string) {
  const lower = lowerCased(keys)
  if (lower.includes(service.key)) throw invalidField('dependsOn', `names the service itself (${service.key})`)
  const ids = await serviceIdsByKey(db, organizationId, lower)
  const unknown = lower.filter((key) => !ids.has(key))
  if (unknown.length > 0) throw invalidField('dependsOn', `no service has the key ${unknown.join(', ')}`)
  await setDependsOn(db, organizationId, service.id, [...ids.values()], userId)
  if ((await countEdges(db, organizationId)) > DEPENDENCIES_PER_ORGANIZATION)
    throw new ConflictError(`the organization would have more than ${DEPENDENCIES_PER_ORGANIZATION} dependencies, the most it may keep`)
  return lower.sort()
}

/**
 * What a service's fields must hold beyond their schema: its key and aliases name no other service
 * (409 naming it) nor each other, its team and policy are the organization's (400 naming the field).
 */
export async function checkService(db: Executor, organizationId: string, fields: ServiceFields, exceptServiceId?: string) {
  if (fields.aliases.includes(fields.key)) throw invalidField('aliases', `names the service's own key ${fields.key}`)
  const taken = await namesTaken(db, organizationId, [fields.key, ...fields.aliases], exceptServiceId)
  for (const [name, owner] of taken)
    throw new ConflictError(`${name === fields.key ? 'key' : 'aliases'}: ${name} already names the service ${owner}`)
  if (fields.ownerTeamId && !(await teamsAmong(db, organizationId, [fields.ownerTeamId])).has(fields.ownerTeamId))
    throw invalidField('ownerTeamId', 'is not a team of the organization')
  if (fields.escalationPolicyId && !(await policiesAmong(db, organizationId, [fields.escalationPolicyId])).has(fields.escalationPolicyId))
    throw invalidField('escalationPolicyId', 'is not an escalation policy of the organization')
}

export const lowerCased = (names: string[]) => [...new Set(names.map((name) => name.toLowerCase()))]

/** A stored service's own fields, as writes compare and audit them. */
export const fieldsOf = (row: ServiceRow): ServiceFields => ({
  key: row.key,
  name: row.name,
  description: row.description,
  ownerTeamId: row.ownerTeamId,
  escalationPolicyId: row.escalationPolicyId,
  tier: row.tier,
  tags: row.tags,
  links: row.links as Record<string, string>,
  aliases: row.aliases,
})
