import { productRoleAtLeast, products, type OrganizationRole, type Product } from '@svc/auth'
import type { ProductRoles } from './queries.js'

/**
 * Who may give whom which organization role. Only an owner grants or takes away `owner`;
 * an admin manages members and admins but never touches an owner and never raises anyone,
 * themselves included, above admin. Answers the reason for a refusal, or undefined.
 */
export function roleChangeRefusal(
  actor: OrganizationRole,
  current: OrganizationRole | undefined,
  next: OrganizationRole,
): string | undefined {
  if (actor === 'owner') return undefined
  if (actor !== 'admin') return 'only admins and owners manage members'
  if (current === 'owner') return 'only an owner can change an owner'
  if (next === 'owner') return 'only an owner can grant the owner role'
  return undefined
}

export function removalRefusal(actor: OrganizationRole, target: OrganizationRole): string | undefined {
  if (actor === 'owner') return undefined
  if (actor !== 'admin') return 'only admins and owners remove members'
  if (target === 'owner') return 'only an owner can remove an owner'
  return undefined
}

/** Product roles follow the same line: an admin may set them for anyone but an owner. */
export function productRolesRefusal(actor: OrganizationRole, target: OrganizationRole): string | undefined {
  if (actor === 'owner') return undefined
  if (actor !== 'admin') return 'only admins and owners set product roles'
  if (target === 'owner') return 'only an owner can change an owner'
  return undefined
}

/**
 * An admin changing their own product roles may only lower them: raising them would let any
 * admin make themselves admin of every product. Owners hold every product role anyway.
 */
export function ownProductRolesRefusal(actor: OrganizationRole, before: ProductRoles, next: ProductRoles): string | undefined {
  if (actor === 'owner') return undefined
  const raised = products.some((product) => {
    const wanted = next[product]
    return wanted !== undefined && !productRoleAtLeast(before[product], wanted)
  })
  return raised ? 'an admin cannot raise their own product roles: ask an owner' : undefined
}

/** The products an actor administers, or every one (platform roles hold every product role). */
export type AdministeredProducts = readonly Product[] | 'all'

/**
 * Who may invite whom from the product API. Organization admins and owners follow the rule
 * above; a product admin who is neither invites plain members only, granting roles in the
 * products they administer and no others.
 */
export function inviteRefusal(
  actor: OrganizationRole,
  administers: AdministeredProducts,
  role: OrganizationRole,
  productRoles: ProductRoles,
): string | undefined {
  if (actor === 'owner' || actor === 'admin') return roleChangeRefusal(actor, undefined, role)
  if (role !== 'member') return 'only admins and owners invite with the organization role admin or owner'
  if (administers === 'all') return undefined
  const foreign = Object.keys(productRoles).find((product) => !administers.includes(product as Product))
  return foreign ? `only an admin of ${foreign} grants ${foreign} roles` : undefined
}
