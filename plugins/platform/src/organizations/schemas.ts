import { Type } from 'typebox'
import { organizationRoles } from '@svc/auth'

export const OrgParams = Type.Object({ orgId: Type.String({ description: 'Organization id' }) })

export const OrganizationRole = Type.Enum(organizationRoles)

const Slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$',
  description: 'Lower-case letters, digits and dashes; unique across the platform',
})
const Name = Type.String({ minLength: 1, maxLength: 200 })

export const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    role: OrganizationRole,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Organization', description: 'An organization, with the caller’s role in it' },
)

export const CreateOrganization = Type.Object({ name: Name, slug: Type.Optional(Slug) }, { additionalProperties: false })

export const UpdateOrganization = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug) },
  { additionalProperties: false, minProperties: 1 },
)

export const DeleteOrganization = Type.Object(
  { confirm: Type.String({ description: 'The organization’s slug, to confirm the deletion' }) },
  { additionalProperties: false },
)
