import { Type } from 'typebox'
import { ProductRolesSchema as ProductRoles } from '@svc/members'
import { PaginationQuery } from '@svc/http'
import { OrganizationRole } from '../organizations/schemas.js'

export { ProductRoles }

export const MemberParams = Type.Object({ orgId: Type.String(), memberId: Type.String() })

export const Member = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The member id' }),
    userId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The member’s account; null while invited (an invitation says nothing about the account behind the address)',
    }),
    email: Type.String(),
    role: OrganizationRole,
    productRoles: ProductRoles,
    pending: Type.Boolean({
      description: 'The user has not signed in yet (always true while invited); the first sign-in with this e-mail links the account',
    }),
    suspended: Type.Boolean({
      description: 'The identity provider deactivated the member (SCIM active=false): the membership grants nothing until reactivated',
    }),
    invited: Type.Boolean({
      description: 'Invited and not yet accepted (see the invitations): the membership grants nothing until the invitation is accepted',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    lastActiveAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description:
          'In the list, for organization admins and owners: the member’s last use of the API in this organization since joining (null: none recorded)',
      }),
    ),
  },
  { title: 'Member' },
)

export const MemberListQuery = Type.Object({
  ...PaginationQuery.properties,
  role: Type.Optional(OrganizationRole),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Part of the e-mail address, any letter case' })),
})

export const AddMember = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 320 }), role: OrganizationRole, productRoles: Type.Optional(ProductRoles) },
  { additionalProperties: false },
)

export const ChangeRole = Type.Object({ role: OrganizationRole }, { additionalProperties: false })

export const ReplaceMember = Type.Object({ role: OrganizationRole, productRoles: ProductRoles }, { additionalProperties: false })

export const ProductRolesBody = Type.Object({ productRoles: ProductRoles }, { additionalProperties: false })

export const TransferOwnership = Type.Object({ memberId: Type.String({ format: 'uuid' }) }, { additionalProperties: false })

export const ProductRoleOptions = Type.Object(
  {
    products: Type.Array(Type.String(), { description: 'Product keys' }),
    roles: Type.Array(Type.String(), { description: 'Product roles, lowest first: each includes the ones before it' }),
  },
  { title: 'ProductRoleOptions' },
)
