import { trackProductEvent } from '@svc/analytics'
import { recordAudit, type AuditContext } from '@svc/audit'
import type { OrganizationRole } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ConflictError, NotFoundError } from '@svc/http'
import { findMemberByUser, insertMember, lockOrganization, replaceProductRoles, userForEmail, type ProductRoles } from './queries.js'

export interface NewMember {
  email: string
  role: OrganizationRole
  productRoles?: ProductRoles
}

/** How the membership came to be, as the audit log names it: added on the platform, invited from the product API. */
export type MemberOrigin = 'member.added' | 'member.invited'

/**
 * Adds an invited membership by e-mail, in the caller's transaction and under the organization's
 * lock: an existing account is invited as it is, an unknown address becomes a pending account
 * that the first verified sign-in with it claims. The membership grants nothing until its
 * invitation is accepted (invitations.ts). An address that is already a member, or already
 * invited, is a 409. The caller has already judged whether its actor may grant `role` and
 * `productRoles` (role-policy.ts).
 */
export async function addMember(trx: Executor, context: AuditContext, organizationId: string, member: NewMember, origin: MemberOrigin) {
  if (!(await lockOrganization(trx, organizationId))) throw new NotFoundError('organization')
  const userId = await userForEmail(trx, member.email)
  const existing = await findMemberByUser(trx, organizationId, userId)
  if (existing?.invited) throw new ConflictError(`${member.email} is already invited: resend or revoke that invitation`)
  if (existing) throw new ConflictError(`${member.email} is already a member`)
  const memberId = await insertMember(trx, organizationId, userId, member.role, true)
  const productRoles = member.productRoles ?? {}
  await replaceProductRoles(trx, organizationId, memberId, productRoles)
  await recordAudit(trx, context, {
    organizationId,
    product: 'platform',
    entityType: 'member',
    entityId: memberId,
    action: origin,
    after: { userId, email: member.email, role: member.role, productRoles },
  })
  await trackProductEvent(trx, {
    organizationId,
    name: 'Member Added',
    userId: context.actor.type === 'user' ? context.actor.userId : null,
    properties: { memberId, role: member.role, via: origin === 'member.invited' ? 'product' : 'platform' },
  })
  return { memberId, userId }
}
