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
  lastActiveAt?: Date | null
}

/** `withActivity`: the viewer is an organization admin or owner, who sees when members were last active. */
export function memberBody(row: MemberRow, productRoles: ProductRoles, withActivity = false) {
  return {
    ...(withActivity ? { lastActiveAt: row.lastActiveAt?.toISOString() ?? null } : {}),
    id: row.id,
    userId: row.userId,
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
