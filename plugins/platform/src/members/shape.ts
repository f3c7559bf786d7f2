import type { OrganizationRole } from '@svc/auth'
import type { ProductRoles } from '@svc/members'

interface MemberRow {
  id: string
  userId: string
  email: string
  role: string
  pending: boolean
  suspended: boolean
  invited: boolean
  createdAt: Date
  updatedAt: Date
}

/**
 * `lastActiveAt`: given when the viewer is an organization admin or owner, who sees when members
 * were last active in the organization (null: not since joining). An invited membership names no
 * account (decision 0023).
 */
export function memberBody(row: MemberRow, productRoles: ProductRoles, lastActiveAt?: Date | null) {
  return {
    ...(lastActiveAt !== undefined ? { lastActiveAt: lastActiveAt?.toISOString() ?? null } : {}),
    id: row.id,
    userId: row.invited ? null : row.userId,
    email: row.email,
    role: row.role as OrganizationRole,
    productRoles,
    pending: row.pending,
    suspended: row.suspended,
    invited: row.invited,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}
