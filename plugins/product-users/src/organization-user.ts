import { Type } from 'typebox'
import { organizationRoles, type OrganizationRole } from '@svc/auth'
import { ProductRolesSchema, type ProductRoles } from '@svc/members'
import { Timestamp } from '@svc/http'

export const OrganizationUser = Type.Object(
  {
    memberId: Type.String({ format: 'uuid' }),
    userId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The account; null while invited (an invitation says nothing about the account behind the address)',
    }),
    email: Type.String(),
    displayName: Type.Union([Type.String(), Type.Null()], { description: 'null while invited' }),
    role: Type.Enum(organizationRoles),
    productRoles: Type.Object(ProductRolesSchema.properties, {
      description: 'Roles granted directly, by product (statuspages, alerting, synthetics, insights)',
    }),
    pending: Type.Boolean({
      description: 'Not signed in yet (always true while invited): the first sign-in with this e-mail claims the membership',
    }),
    suspended: Type.Boolean(),
    invited: Type.Boolean({ description: 'Invited and not yet accepted: the membership grants nothing until then' }),
    joinedAt: Timestamp,
  },
  { title: 'OrganizationUser' },
)

interface MemberRow {
  id: string
  userId: string
  email: string
  displayName: string | null
  role: string
  pending: boolean
  suspended: boolean
  invited: boolean
  createdAt: Date
}

export function organizationUserBody(row: MemberRow, productRoles: ProductRoles) {
  return {
    memberId: row.id,
    userId: row.invited ? null : row.userId,
    email: row.email,
    displayName: row.displayName,
    role: row.role as OrganizationRole,
    productRoles,
    pending: row.pending,
    suspended: row.suspended,
    invited: row.invited,
    joinedAt: row.createdAt.toISOString(),
  }
}
