import type { ScimUserRow } from '../../queries/scim-users.js'
import { ScimError } from '../errors.js'
import { canonicalResource, isObject, type Json, type JsonObject } from '../schema/canonical.js'
import { ENTERPRISE_USER_SCHEMA, USER_SCHEMA, enterpriseUserSchema, userSchema } from '../schema/definitions.js'
import { checkTypes } from '../schema/types.js'
import { resourceMeta, type ResourceLocation } from '../resource-meta.js'

/** What a SCIM User write stores: the keys of the membership, and the rest as sent. */
export interface UserInput {
  userName: string
  externalId: string | null
  active: boolean
  /** Everything else (name, emails, the enterprise extension...), in canonical form. */
  attributes: JsonObject
  /** The address that links the User to a platform account. */
  email: string
}

// Kept in columns or derived, never in the attributes document; a password is never kept.
const NOT_STORED = new Set(['id', 'externalId', 'userName', 'active', 'password', 'groups', 'meta', 'schemas'])

/**
 * The address that links a User to a platform account: its primary e-mail, else its first, else
 * its userName. Providers do not always send real addresses; an account created for one that is
 * not stays pending, as nobody signs in with it.
 */
function linkingEmail(attributes: JsonObject, userName: string): string {
  const emails = Array.isArray(attributes.emails) ? attributes.emails.filter(isObject) : []
  const chosen =
    emails.find((email) => email.primary === true && typeof email.value === 'string') ??
    emails.find((email) => typeof email.value === 'string')
  return typeof chosen?.value === 'string' && chosen.value.trim() !== '' ? chosen.value : userName
}

/** Reads a User as a provider sends it (any letter case, string booleans, nulls); 400 when it cannot be stored. */
export function readUser(body: unknown): UserInput {
  if (!isObject(body)) throw new ScimError(400, 'the body must be a SCIM User object', 'invalidSyntax')
  const canonical = canonicalResource(userSchema, [enterpriseUserSchema], body)
  checkTypes(userSchema.attributes, canonical)
  const extension = canonical[ENTERPRISE_USER_SCHEMA]
  if (isObject(extension)) checkTypes(enterpriseUserSchema.attributes, extension, ENTERPRISE_USER_SCHEMA)
  const userName = canonical.userName
  if (typeof userName !== 'string' || userName.trim() === '') throw new ScimError(400, 'userName is required', 'invalidValue')
  const active = canonical.active ?? true
  if (typeof active !== 'boolean') throw new ScimError(400, 'active must be a boolean', 'invalidValue')
  const attributes = Object.fromEntries(Object.entries(canonical).filter(([key]) => !NOT_STORED.has(key)))
  const email = linkingEmail(attributes, userName)
  const externalId = typeof canonical.externalId === 'string' ? canonical.externalId : null
  return { userName, externalId, active, attributes, email }
}

/**
 * A member who signed in without being provisioned has the names their ID token gave
 * (`given_name`, `family_name`): Okta's SPEC test reads `name.givenName` and `familyName` of the
 * first User of the list, usually the owner.
 */
function accountName(row: ScimUserRow): JsonObject | undefined {
  if (row.accountGivenName === null && row.accountFamilyName === null) return undefined
  return {
    ...(row.accountGivenName !== null ? { givenName: row.accountGivenName } : {}),
    ...(row.accountFamilyName !== null ? { familyName: row.accountFamilyName } : {}),
  }
}

/** The SCIM representation of a membership (RFC 7643 §4.1), nulls left out. */
export function userResource(row: ScimUserRow, groups: { id: string; displayName: string }[], location: ResourceLocation): JsonObject {
  const stored = (isObject(row.scimAttributes) ? row.scimAttributes : {}) as JsonObject
  const { [ENTERPRISE_USER_SCHEMA]: extension, ...core } = stored
  const displayName = core.displayName ?? row.accountDisplayName ?? undefined
  const name = core.name ?? accountName(row)
  const resource: JsonObject = {
    schemas: extension ? [USER_SCHEMA, ENTERPRISE_USER_SCHEMA] : [USER_SCHEMA],
    id: row.id,
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    userName: row.userName,
    ...core,
    ...(displayName !== undefined ? { displayName } : {}),
    ...(name !== undefined ? { name } : {}),
    // A member who joined without SCIM has the account's address.
    emails: (core.emails as Json[] | undefined) ?? [{ value: row.email, type: 'work', primary: true }],
    active: row.suspendedAt === null,
  }
  if (groups.length > 0) {
    resource.groups = groups.map((group) => ({
      value: group.id,
      display: group.displayName,
      $ref: location.of('Groups', group.id),
      type: 'direct',
    }))
  }
  if (extension) resource[ENTERPRISE_USER_SCHEMA] = extension
  resource.meta = resourceMeta('User', row, location)
  return resource
}
