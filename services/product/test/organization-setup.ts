import type { TestService, SignedIn } from '@svc/testkit'

type AlertingRole = 'viewer' | 'responder' | 'manager' | 'admin'

/**
 * Organizations and roles are the platform's; product tests write them as the platform leaves
 * them. `owner` owns the organization; every other name is a member with the given alerting role
 * (or none); `stranger` owns a second organization of their own.
 */
export async function alertingOrganization(service: TestService, slug: string, roles: Record<string, AlertingRole | null>) {
  const db = service.app.database.db
  const names = ['owner', 'stranger', ...Object.keys(roles)]
  const people = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await service.signIn(`${name}@${slug}.example`)] as const))) as Record<string, SignedIn>
  const person = (name: string): SignedIn => {
    const found = people[name]
    if (!found) throw new Error(`no ${name} in this organization`)
    return found
  }
  const [organization, other] = await db.insertInto('core.organizations').values([{ name: slug, slug }, { name: `${slug} other`, slug: `${slug}-other` }]).returning('id').execute()
  if (!organization || !other) throw new Error('organizations not created')
  await db.insertInto('core.organizationMembers').values([
    { organizationId: organization.id, userId: person('owner').userId, role: 'owner' },
    { organizationId: other.id, userId: person('stranger').userId, role: 'owner' },
  ]).execute()
  for (const [name, role] of Object.entries(roles)) {
    const member = await db.insertInto('core.organizationMembers').values({ organizationId: organization.id, userId: person(name).userId, role: 'member' }).returning('id').executeTakeFirstOrThrow()
    if (role) await db.insertInto('core.orgProductRoles').values({ organizationId: organization.id, memberId: member.id, product: 'alerting', role }).execute()
  }
  return { orgId: organization.id, otherOrgId: other.id, person }
}
