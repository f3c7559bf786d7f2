import type { OrganizationRole } from '@svc/auth'

export function organizationBody(
  row: { id: string; name: string; slug: string; createdAt: Date; updatedAt: Date },
  role: OrganizationRole,
) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    role,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** The fields of an organization the audit log compares. */
export function organizationFields(row: { name: string; slug: string }) {
  return { name: row.name, slug: row.slug }
}
