import { Type } from 'typebox'
import { InvitationStatusSchema as InvitationStatus, ProductRolesSchema as ProductRoles } from '@svc/members'
import { PaginationQuery } from '@svc/http'
import { OrganizationRole } from '../organizations/schemas.js'

export const InvitationParams = Type.Object({ orgId: Type.String(), invitationId: Type.String({ description: 'The invitation id' }) })

export const InvitationListQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(InvitationStatus),
})

export const CreateInvitation = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 320 }), role: OrganizationRole, productRoles: Type.Optional(ProductRoles) },
  { additionalProperties: false },
)

export const AcceptInvitation = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the invitation link (`inv_…`)' }) },
  { additionalProperties: false },
)

export const AcceptedInvitation = Type.Object(
  {
    organization: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), slug: Type.String() }),
    memberId: Type.String({ format: 'uuid' }),
    role: OrganizationRole,
  },
  { title: 'AcceptedInvitation' },
)
