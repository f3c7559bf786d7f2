/** Organization roles, lowest first. */
export const organizationRoles = ['member', 'admin', 'owner'] as const
export type OrganizationRole = (typeof organizationRoles)[number]

/** Product keys (ARCHITECTURE.md, "Product keys and roles"). */
export const products = ['statuspages', 'alerting', 'synthetics', 'insights'] as const
export type Product = (typeof products)[number]

/**
 * Product role hierarchy, lowest first: reading a surface needs `viewer`, acting on
 * incidents and alerts `responder`, configuring a surface `manager`.
 */
export const productRoles = ['viewer', 'responder', 'manager', 'admin'] as const
export type ProductRole = (typeof productRoles)[number]

export function productRoleAtLeast(held: string | undefined, required: ProductRole): boolean {
  if (held === undefined) return false
  const rank = productRoles.indexOf(held as ProductRole)
  return rank >= 0 && rank >= productRoles.indexOf(required)
}

const productNames = new Set<string>(products)
const productRoleNames = new Set<string>(productRoles)

export function isProduct(value: string): value is Product {
  return productNames.has(value)
}

export function isProductRole(value: string): value is ProductRole {
  return productRoleNames.has(value)
}
