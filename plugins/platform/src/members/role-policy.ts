import type { OrganizationRole } from '@svc/auth'

/**
 * Who may give whom which organization role. Only an owner grants or takes away `owner`;
 * an admin manages members and admins but never touches an owner and never raises anyone,
 * themselves included, above admin. Answers the reason for a refusal, or undefined.
 */
export function roleChangeRefusal(actor: OrganizationRole, current: OrganizationRole | undefined, next: OrganizationRole): string | undefined {
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
