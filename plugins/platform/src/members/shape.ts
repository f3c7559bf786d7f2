import type { OrganizationRole } from '@svc/auth'
import type { ProductRoles } from '@svc/members'

interface MemberRow {
  id: string
  userId: string
  email: string
  role: string
  pending: boolean
  suspended: boolean
  createdAt: Date
  updatedAt: Date
}

export function memberBody(row: MemberRow, productRoles: ProductRoles) {
  return {
    id: row.id,
    userId: row.userId,
    email: row.email,
    role: row.role as OrganizationRole,
    productRoles,
    pending: row.pending,
    suspended: row.suspended,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}
