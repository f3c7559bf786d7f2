import type { TestService, SignedIn } from '@svc/testkit'

type ProductRole = 'viewer' | 'responder' | 'manager' | 'admin'
type Product = 'alerting' | 'insights' | 'statuspages' | 'synthetics'
/** An alerting role, or roles per product. */
type Roles = ProductRole | null | Partial<Record<Product, ProductRole>>

/**
 * Organizations and roles are the platform's; product tests write them as the platform leaves
 * them. `owner` owns the organization; every other name is a member with the given alerting role
 * (or none), or the roles given per product; `stranger` owns a second organization of their own.
 */
export async function alertingOrganization(service: TestService, slug: string, roles: Record<string, Roles>) {
  const db = service.app.database.db
  const names = ['owner', 'stranger', ...Object.keys(roles)]
  const people = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await service.signIn(`${name}@${slug}.example`)] as const)),
  ) as Record<string, SignedIn>
  const person = (name: string): SignedIn => {
    const found = people[name]
    if (!found) throw new Error(`no ${name} in this organization`)
    return found
  }
  const [organization, other] = await db
    .insertInto('core.organizations')
    .values([
      { name: slug, slug },
      { name: `${slug} other`, slug: `${slug}-other` },
    ])
    .returning('id')
    .execute()
  if (!organization || !other) throw new Error('organizations not created')
  await db
    .insertInto('core.organizationMembers')
    .values([
      { organizationId: organization.id, userId: person('owner').userId, role: 'owner' },
      { organizationId: other.id, userId: person('stranger').userId, role: 'owner' },
    ])
    .execute()
  for (const [name, role] of Object.entries(roles)) {
    const member = await db
      .insertInto('core.organizationMembers')
      .values({ organizationId: organization.id, userId: person(name).userId, role: 'member' })
      .returning('id')
      .executeTakeFirstOrThrow()
    const granted = typeof role === 'string' ? { alerting: role } : (role ?? {})
    for (const [product, productRole] of Object.entries(granted)) {
      await db
        .insertInto('core.orgProductRoles')
        .values({ organizationId: organization.id, memberId: member.id, product, role: productRole })
        .execute()
    }
  }
  return { orgId: organization.id, otherOrgId: other.id, person }
}
