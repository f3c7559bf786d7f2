import type { FastifyRequest } from 'fastify'
import { publish } from '@svc/events'
import { auditContextOf, recordAudit } from '@svc/audit'
import { type Membership, membershipOf, type OrganizationRole } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ConflictError, ForbiddenError, NotFoundError } from '@svc/http'
import {
  countOwners,
  deleteMember,
  findMember,
  lockOrganization,
  ownProductRolesRefusal,
  productRolesOfMembers,
  productRolesRefusal,
  removalRefusal,
  replaceProductRoles,
  roleChangeRefusal,
  setMemberRole,
  type ProductRoles,
} from '@svc/members'

type Member = NonNullable<Awaited<ReturnType<typeof findMember>>>

/**
 * The state every membership change starts from, read under the organization's row lock:
 * the caller's role as it is now (not as it was when the request arrived) and the target.
 */
export async function lockedMembers(trx: Executor, membership: Membership, targetMemberId: string) {
  if (!(await lockOrganization(trx, membership.organizationId))) throw new NotFoundError('organization')
  const actor = await findMember(trx, membership.organizationId, membership.memberId)
  if (!actor) throw new NotFoundError('organization')
  const target = await findMember(trx, membership.organizationId, targetMemberId)
  if (!target) throw new NotFoundError('member')
  return { actorRole: actor.role as OrganizationRole, target }
}

async function assertNotLastOwner(trx: Executor, organizationId: string, target: Member, what: string): Promise<void> {
  if (target.role === 'owner' && (await countOwners(trx, organizationId)) <= 1) {
    throw new ConflictError(`the last owner cannot ${what}: transfer ownership first`)
  }
}

export async function changeRole(
  trx: Executor,
  request: FastifyRequest,
  actorRole: OrganizationRole,
  target: Member,
  next: OrganizationRole,
) {
  if (target.role === next) return
  const refusal = roleChangeRefusal(actorRole, target.role as OrganizationRole, next)
  if (refusal) throw new ForbiddenError(refusal)
  const organizationId = membershipOf(request).organizationId
  if (next !== 'owner') await assertNotLastOwner(trx, organizationId, target, 'be demoted')
  await setMemberRole(trx, organizationId, target.id, next)
  await recordAudit(trx, auditContextOf(request), {
    organizationId,
    product: 'platform',
    entityType: 'member',
    entityId: target.id,
    action: 'member.role_changed',
    before: { role: target.role },
    after: { role: next },
  })
}

export async function setProductRoles(
  trx: Executor,
  request: FastifyRequest,
  actorRole: OrganizationRole,
  target: Member,
  next: ProductRoles,
) {
  const refusal = productRolesRefusal(actorRole, target.role as OrganizationRole)
  if (refusal) throw new ForbiddenError(refusal)
  const { organizationId, memberId } = membershipOf(request)
  const before = (await productRolesOfMembers(trx, organizationId, [target.id])).get(target.id) ?? {}
  const ownRefusal = target.id === memberId ? ownProductRolesRefusal(actorRole, before, next) : undefined
  if (ownRefusal) throw new ForbiddenError(ownRefusal)
  await replaceProductRoles(trx, organizationId, target.id, next)
  await recordAudit(trx, auditContextOf(request), {
    organizationId,
    product: 'platform',
    entityType: 'member',
    entityId: target.id,
    action: 'member.product_roles_changed',
    before: { productRoles: before },
    after: { productRoles: next },
  })
}

export async function removeMember(trx: Executor, request: FastifyRequest, actorRole: OrganizationRole, target: Member) {
  const refusal = removalRefusal(actorRole, target.role as OrganizationRole)
  if (refusal) throw new ForbiddenError(refusal)
  const organizationId = membershipOf(request).organizationId
  await assertNotLastOwner(trx, organizationId, target, 'leave')
  await deleteMember(trx, organizationId, target.id)
  // In the same transaction: the surfaces that keep people (on-call rotations, teams, policies) forget them.
  await publish(request.server.jobs, trx, 'member.removed', { organizationId, userId: target.userId })
  await recordAudit(trx, auditContextOf(request), {
    organizationId,
    product: 'platform',
    entityType: 'member',
    entityId: target.id,
    action: 'member.removed',
    before: { userId: target.userId, email: target.email, role: target.role },
  })
}
