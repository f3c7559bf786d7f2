// The schemas this server supports, in RFC 7643 §7 form. They are served by /Schemas and
// drive everything else: the letter case of attribute names, which values are booleans, what
// a filter may name. What is not listed here is not stored.

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'

export type AttributeType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex'

export interface AttributeDefinition {
  name: string
  type: AttributeType
  multiValued: boolean
  description: string
  required: boolean
  caseExact: boolean
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly'
  returned: 'always' | 'never' | 'default' | 'request'
  uniqueness: 'none' | 'server' | 'global'
  subAttributes?: AttributeDefinition[]
  referenceTypes?: string[]
  canonicalValues?: string[]
}

export interface SchemaDefinition {
  id: string
  name: string
  description: string
  attributes: AttributeDefinition[]
}

type Options = Partial<Omit<AttributeDefinition, 'name' | 'type' | 'description'>>

function attribute(name: string, type: AttributeType, description: string, options: Options = {}): AttributeDefinition {
  return {
    name,
    type,
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  }
}

const text = (name: string, description: string, options?: Options) => attribute(name, 'string', description, options)

/** value/display/type/primary: the shape of emails, phone numbers, ims, photos, roles, entitlements. */
function multiValued(name: string, description: string, types: string[] = []): AttributeDefinition {
  return attribute(name, 'complex', description, {
    multiValued: true,
    subAttributes: [
      text('value', `The ${name} value`),
      text('display', 'A human-readable name, primarily used for display purposes'),
      text('type', 'A label indicating the function', types.length ? { canonicalValues: types } : {}),
      attribute('primary', 'boolean', 'Whether this is the primary value'),
    ],
  })
}

export const userSchema: SchemaDefinition = {
  id: USER_SCHEMA,
  name: 'User',
  description: 'User Account',
  attributes: [
    text('userName', 'Unique identifier for the User, unique per organization (case-insensitively)', {
      required: true,
      uniqueness: 'server',
    }),
    attribute('name', 'complex', "The components of the user's real name", {
      subAttributes: [
        text('formatted', 'The full name'),
        text('familyName', 'The family name'),
        text('givenName', 'The given name'),
        text('middleName', 'The middle name(s)'),
        text('honorificPrefix', 'The honorific prefix(es)'),
        text('honorificSuffix', 'The honorific suffix(es)'),
      ],
    }),
    text('displayName', 'The name of the User, suitable for display to end-users'),
    text('nickName', 'The casual way to address the user'),
    attribute('profileUrl', 'reference', "A URI of the User's online profile", { referenceTypes: ['external'] }),
    text('title', "The user's title"),
    text('userType', 'The relationship between the organization and the user'),
    text('preferredLanguage', "The User's preferred written or spoken language"),
    text('locale', "The User's default location"),
    text('timezone', "The User's time zone in IANA format"),
    attribute('active', 'boolean', "The User's administrative status; false suspends the membership"),
    text('password', 'Accepted and discarded: people sign in through the identity provider', {
      mutability: 'writeOnly',
      returned: 'never',
    }),
    multiValued('emails', 'Email addresses for the user', ['work', 'home', 'other']),
    multiValued('phoneNumbers', 'Phone numbers for the User', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
    multiValued('ims', 'Instant messaging addresses for the User'),
    multiValued('photos', 'URLs of photos of the User', ['photo', 'thumbnail']),
    attribute('addresses', 'complex', 'A physical mailing address for this User', {
      multiValued: true,
      subAttributes: [
        text('formatted', 'The full mailing address'),
        text('streetAddress', 'The full street address component'),
        text('locality', 'The city or locality component'),
        text('region', 'The state or region component'),
        text('postalCode', 'The zip code or postal code component'),
        text('country', 'The country name component'),
        text('type', 'A label indicating the function', { canonicalValues: ['work', 'home', 'other'] }),
        attribute('primary', 'boolean', 'Whether this is the primary address'),
      ],
    }),
    attribute('groups', 'complex', 'The groups the user belongs to', {
      multiValued: true,
      mutability: 'readOnly',
      subAttributes: [
        text('value', 'The identifier of the Group', { mutability: 'readOnly' }),
        attribute('$ref', 'reference', 'The URI of the Group', { mutability: 'readOnly', referenceTypes: ['Group'] }),
        text('display', 'The displayName of the Group', { mutability: 'readOnly' }),
        text('type', 'direct', { mutability: 'readOnly', canonicalValues: ['direct'] }),
      ],
    }),
    multiValued('entitlements', 'A list of entitlements for the User'),
    multiValued('roles', 'A list of roles for the User'),
  ],
}

export const enterpriseUserSchema: SchemaDefinition = {
  id: ENTERPRISE_USER_SCHEMA,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    text('employeeNumber', 'Numeric or alphanumeric identifier assigned to a person'),
    text('costCenter', 'Identifies the name of a cost center'),
    text('organization', 'Identifies the name of an organization'),
    text('division', 'Identifies the name of a division'),
    text('department', 'Identifies the name of a department'),
    attribute('manager', 'complex', "The User's manager", {
      subAttributes: [
        text('value', 'The id of the SCIM resource representing the manager'),
        attribute('$ref', 'reference', 'The URI of the manager', { referenceTypes: ['User'] }),
        text('displayName', 'The displayName of the manager', { mutability: 'readOnly' }),
      ],
    }),
  ],
}

export const groupSchema: SchemaDefinition = {
  id: GROUP_SCHEMA,
  name: 'Group',
  description: 'Group; its members are users of the organization, and it may grant product roles',
  attributes: [
    text('displayName', 'A human-readable name for the Group, unique per organization', { required: true, uniqueness: 'server' }),
    attribute('members', 'complex', 'A list of members of the Group', {
      multiValued: true,
      subAttributes: [
        text('value', 'Identifier of the member of this Group', { mutability: 'immutable', caseExact: true }),
        attribute('$ref', 'reference', 'The URI of the member', { mutability: 'immutable', referenceTypes: ['User'] }),
        text('display', 'The userName of the member', { mutability: 'readOnly' }),
        text('type', 'The type of the member', { mutability: 'immutable', canonicalValues: ['User'] }),
      ],
    }),
  ],
}

export const schemas: SchemaDefinition[] = [userSchema, enterpriseUserSchema, groupSchema]
