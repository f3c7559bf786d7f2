import { sql, type RawBuilder } from 'kysely'
import { scalarAttribute, type FilterScope, type MultiValuedAttribute, type ScalarAttribute } from '../filter/compile.js'
import type { AttributePath } from '../filter/parse.js'
import { ENTERPRISE_USER_SCHEMA, enterpriseUserSchema, userSchema, type AttributeDefinition } from '../schema/definitions.js'

// The SQL behind each filterable User attribute, over the membership row aliased `m` alone (the
// account is reached by a subquery where needed), so counting and paging need no join. A member
// who joined without SCIM has no stored e-mails: theirs is the account's address.

const scalar = scalarAttribute

const accountOf = (column: 'email' | 'display_name') =>
  sql`(select account.${sql.raw(column)} from core.users account where account.id = m.user_id)`
const memberEmails = sql`coalesce(m.scim_attributes -> 'emails', jsonb_build_array(jsonb_build_object('value', ${accountOf('email')}, 'type', 'work', 'primary', true)))`

function find(definitions: AttributeDefinition[], lowerName: string): AttributeDefinition | undefined {
  return definitions.find((definition) => definition.name.toLowerCase() === lowerName)
}

function scalarType(definition: AttributeDefinition): ScalarAttribute['type'] {
  return definition.type === 'boolean' ? 'boolean' : definition.type === 'dateTime' ? 'dateTime' : 'string'
}

/** A JSON attribute read as text (booleans cast), from a `jsonb` expression. */
function jsonScalar(source: RawBuilder<unknown>, definition: AttributeDefinition): ScalarAttribute {
  const textValue = sql`(${source} ->> ${definition.name})`
  return scalar(scalarType(definition), definition.type === 'boolean' ? sql`${textValue}::boolean` : textValue, definition.caseExact)
}

/** The elements of a JSON array attribute, each one a scope of its sub-attributes. */
function jsonElements(array: RawBuilder<unknown>, definition: AttributeDefinition): MultiValuedAttribute {
  const elementScope: FilterScope = {
    attribute(path) {
      const sub = path.sub === undefined && !path.schema ? find(definition.subAttributes ?? [], path.name) : undefined
      return sub && sub.type !== 'complex' ? jsonScalar(sql`element`, sub) : undefined
    },
  }
  return {
    kind: 'multi',
    some: (condition) =>
      sql<boolean>`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(${array}) = 'array' then ${array} else '[]'::jsonb end) as element where ${condition(elementScope)})`,
  }
}

/**
 * Members with this e-mail, found through indexes: the GIN index over the lower-cased values of
 * stored e-mails, and, for members without stored e-mails, the accounts' lower(email) index.
 */
function membersWithEmail(value: string): RawBuilder<boolean> {
  return sql<boolean>`m.id in (
    select e.id from core.organization_members e
      where core.scim_email_values(e.scim_attributes -> 'emails') @> array[lower(${value})]
    union all
    select a.id from core.organization_members a join core.users au on au.id = a.user_id
      where lower(au.email) = lower(${value}) and a.scim_attributes -> 'emails' is null
  )`
}

const groupsOfMember: MultiValuedAttribute = {
  kind: 'multi',
  some: (condition) =>
    sql<boolean>`exists (select 1 from core.scim_group_members gm where gm.organization_id = m.organization_id and gm.member_id = m.id and ${condition(
      {
        attribute: (path) => (path.name === 'value' && !path.sub ? scalar('string', sql`gm.group_id::text`, true) : undefined),
      },
    )})`,
}

function fromDefinitions(path: AttributePath, definitions: AttributeDefinition[], source: RawBuilder<unknown>) {
  const definition = find(definitions, path.name)
  // A write-only attribute (the password) is never stored, so never matched.
  if (!definition || definition.returned === 'never') return undefined
  if (definition.multiValued) return path.sub === undefined ? jsonElements(sql`(${source} -> ${definition.name})`, definition) : undefined
  if (definition.type === 'complex') {
    const sub = path.sub === undefined ? undefined : find(definition.subAttributes ?? [], path.sub)
    return sub ? jsonScalar(sql`(${source} -> ${definition.name})`, sub) : undefined
  }
  return path.sub === undefined ? jsonScalar(source, definition) : undefined
}

export const userFilterScope: FilterScope = {
  attribute(path) {
    if (path.schema === ENTERPRISE_USER_SCHEMA.toLowerCase()) {
      return fromDefinitions(path, enterpriseUserSchema.attributes, sql`(m.scim_attributes -> ${ENTERPRISE_USER_SCHEMA})`)
    }
    if (path.schema) return undefined
    const whole = path.sub === undefined
    switch (path.name) {
      case 'id':
        return whole ? scalar('string', sql`m.id::text`, true) : undefined
      case 'username':
        return whole ? scalar('string', sql`m.user_name`) : undefined
      case 'externalid':
        return whole ? scalar('string', sql`m.external_id`, true) : undefined
      case 'active':
        return whole ? scalar('boolean', sql`(m.suspended_at is null)`) : undefined
      case 'displayname':
        return whole ? scalar('string', sql`coalesce(m.scim_attributes ->> 'displayName', ${accountOf('display_name')})`) : undefined
      case 'emails':
        return whole
          ? { ...jsonElements(memberEmails, find(userSchema.attributes, 'emails') as AttributeDefinition), holdingValue: membersWithEmail }
          : undefined
      case 'groups':
        return whole ? groupsOfMember : undefined
      case 'meta':
        if (path.sub === 'created') return scalar('dateTime', sql`m.created_at`)
        if (path.sub === 'lastmodified') return scalar('dateTime', sql`m.updated_at`)
        return undefined
      default:
        return fromDefinitions(path, userSchema.attributes, sql`m.scim_attributes`)
    }
  },
}
