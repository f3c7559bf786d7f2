import { sql } from 'kysely'
import { isUuid } from '@svc/auth'
import type { GroupMember, ScimGroupRow } from '../../queries/scim-groups.js'
import { ScimError } from '../errors.js'
import { scalarAttribute, type FilterScope } from '../filter/compile.js'
import { canonicalResource, isObject, type JsonObject } from '../schema/canonical.js'
import { GROUP_SCHEMA, groupSchema } from '../schema/definitions.js'
import { checkTypes } from '../schema/types.js'
import { resourceMeta, type ResourceLocation } from '../resource-meta.js'

export interface GroupInput {
  displayName: string
  externalId: string | null
  /** Members as sent; ids that are not members of the organization are dropped when stored. */
  members: { id: string; display: string | null }[]
}

/** Reads a Group as a provider sends it; 400 when it cannot be stored. */
export function readGroup(body: unknown): GroupInput {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a SCIM Group object', 'invalidSyntax')
  const canonical = canonicalResource(groupSchema, [], body)
  checkTypes(groupSchema.attributes, canonical)
  const { displayName } = canonical
  if (typeof displayName !== 'string' || displayName.trim() === '') throw new ScimError(400, 'displayName is required', 'invalidValue')
  return { displayName, externalId: typeof canonical.externalId === 'string' ? canonical.externalId : null, members: membersOf(body) }
}

function field(object: JsonObject, name: string): unknown {
  const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === name)
  return key === undefined ? undefined : object[key]
}

/**
 * The members of a Group body, read before canonicalization: Azure's own reference collection
 * names a member's label `displayName`, not `display`, and expects it back. A bare string is an id.
 */
function membersOf(body: JsonObject): GroupInput['members'] {
  const listed = field(body, 'members')
  const members = new Map<string, string | null>()
  for (const item of Array.isArray(listed) ? listed : []) {
    const id = isObject(item) ? field(item, 'value') : item
    if (typeof id !== 'string' || !isUuid(id)) continue
    const display = isObject(item) ? (field(item, 'display') ?? field(item, 'displayname')) : undefined
    members.set(id.toLowerCase(), typeof display === 'string' ? display : null)
  }
  return [...members].map(([id, display]) => ({ id, display }))
}

export function groupResource(row: ScimGroupRow, members: GroupMember[] | undefined, location: ResourceLocation): JsonObject {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    displayName: row.displayName,
    ...(members
      ? {
          members: members.map((member) => ({
            value: member.id,
            display: member.display,
            $ref: location.of('Users', member.id),
            type: 'User',
          })),
        }
      : {}),
    meta: resourceMeta('Group', row, location),
  }
}

const scalar = scalarAttribute

/** The SQL behind each filterable Group attribute; the query aliases the group `g`. */
export const groupFilterScope: FilterScope = {
  attribute(path) {
    if (path.schema) return undefined
    const whole = path.sub === undefined
    switch (path.name) {
      case 'id':
        return whole ? scalar('string', sql`g.id::text`, true) : undefined
      case 'displayname':
        return whole ? scalar('string', sql`g.display_name`) : undefined
      case 'externalid':
        return whole ? scalar('string', sql`g.external_id`, true) : undefined
      case 'meta':
        if (path.sub === 'created') return scalar('dateTime', sql`g.created_at`)
        if (path.sub === 'lastmodified') return scalar('dateTime', sql`g.updated_at`)
        return undefined
      case 'members':
        return whole
          ? {
              kind: 'multi',
              some: (condition) =>
                sql<boolean>`exists (select 1 from core.scim_group_members gm where gm.group_id = g.id and ${condition({
                  attribute: (element) =>
                    element.name === 'value' && !element.sub ? scalar('string', sql`gm.member_id::text`, true) : undefined,
                })})`,
            }
          : undefined
      default:
        return undefined
    }
  },
}
