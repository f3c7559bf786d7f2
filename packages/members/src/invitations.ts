import { createHash, randomBytes } from 'node:crypto'
import { trackProductEvent } from '@svc/analytics'
import { recordAudit, type AuditContext } from '@svc/audit'
import type { OrganizationRole } from '@svc/auth'
import type { Executor } from '@svc/db'
import { ConflictError, ForbiddenError, GoneError, NotFoundError } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { addMember, type MemberOrigin, type NewMember } from './add-member.js'
import { invitationEmail } from './invitation-email.js'
import {
  deleteUnjoinedMembership,
  insertInvitation,
  joinMembership,
  lockInvitation,
  markAccepted,
  markResent,
  markRevoked,
  membershipOfUser,
  resendsInLastHour,
  verifiedAddressOf,
} from './invitation-queries.js'
import type { ProductRoles } from './queries.js'

/** What sending an invitation needs: the outbox, the lifetime (INVITATION_TTL_DAYS) and who sends it. */
export interface InvitationSender {
  notifier: Notifier
  ttlDays: number
  organizationName: string
  inviter: { email: string; displayName: string | null }
}

/** The secret half of an invitation: in the answer to its sender and the e-mail, never stored. */
export interface SentInvitation {
  invitationId: string
  memberId: string
  /** The accept token; the database keeps its SHA-256 only. */
  token: string
  /** The web application's accept page (APP_URL), or null when none is configured. */
  acceptUrl: string | null
  expiresAt: Date
  delivery: { messageId: string; status: 'pending' | 'held' }
}

/** A token a person can paste: 32 random bytes, base64url, prefixed so secret scanners know it. */
function newToken(): string {
  return `inv_${randomBytes(32).toString('base64url')}`
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

function expiryFrom(ttlDays: number): Date {
  return new Date(Date.now() + ttlDays * 86_400_000)
}

function acceptUrlOf(notifier: Notifier, token: string): string | null {
  const appUrl = notifier.config.appUrl
  return appUrl ? `${appUrl}/invitations/accept?token=${encodeURIComponent(token)}` : null
}

async function mail(
  trx: Executor,
  sender: InvitationSender,
  letter: { organizationId: string; email: string; role: NewMember['role']; productRoles: ProductRoles; expiresAt: Date },
) {
  const token = newToken()
  const acceptUrl = acceptUrlOf(sender.notifier, token)
  const message = invitationEmail({ ...letter, organizationName: sender.organizationName, inviter: sender.inviter, token, acceptUrl })
  const delivery = await sender.notifier.queueEmail(trx, message)
  return { token, acceptUrl, delivery }
}

/**
 * Invites a person by e-mail (decision 0023): the waiting membership (add-member.ts), the
 * invitation that holds it open, and its e-mail in the outbox, all in the caller's transaction.
 * The caller wakes the notifier after the commit.
 */
export async function inviteMember(
  trx: Executor,
  context: AuditContext,
  organizationId: string,
  member: NewMember,
  origin: MemberOrigin,
  sender: InvitationSender,
): Promise<SentInvitation> {
  const { memberId } = await addMember(trx, context, organizationId, member, origin)
  const productRoles = member.productRoles ?? {}
  const expiresAt = expiryFrom(sender.ttlDays)
  const { token, acceptUrl, delivery } = await mail(trx, sender, {
    organizationId,
    email: member.email,
    role: member.role,
    productRoles,
    expiresAt,
  })
  const invitationId = await insertInvitation(trx, {
    organizationId,
    memberId,
    email: member.email,
    role: member.role,
    productRoles,
    invitedBy: context.actor.type === 'user' ? context.actor.userId : null,
    tokenHash: hashInvitationToken(token),
    expiresAt,
  })
  await recordAudit(trx, context, {
    organizationId,
    product: 'platform',
    entityType: 'invitation',
    entityId: invitationId,
    action: 'invitation.sent',
    after: { email: member.email, role: member.role, productRoles, memberId, expiresAt: expiresAt.toISOString() },
  })
  return { invitationId, memberId, token, acceptUrl, expiresAt, delivery }
}

/** An invitation was resent as often as an hour allows: when a resend is next possible. */
export class ResendLimitReached extends Error {
  constructor(
    readonly perHour: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`an invitation is resent at most ${perHour} times an hour: try again in ${retryAfterSeconds} seconds`)
  }
}

/**
 * Sends a pending or expired invitation again: a new token (the old link stops working) and a
 * new expiry. An accepted or revoked one is a 409: there is nothing to resend. At most
 * `resendsPerHour` resends within an hour, counted from the audit log under the invitation's
 * lock, so only resends that happened count and replicas share the count; past it,
 * `ResendLimitReached` and nothing is sent.
 */
export async function resendInvitation(
  trx: Executor,
  context: AuditContext,
  organizationId: string,
  invitationId: string,
  sender: InvitationSender,
  resendsPerHour: number,
): Promise<SentInvitation> {
  const invitation = await lockInvitation(trx, { organizationId, id: invitationId })
  if (!invitation) throw new NotFoundError('invitation')
  if (invitation.status === 'accepted') throw new ConflictError('the invitation was accepted: there is nothing to resend')
  if (invitation.status === 'revoked' || invitation.memberId === null) {
    throw new ConflictError('the invitation was revoked: invite the address again')
  }
  const recent = await resendsInLastHour(trx, organizationId, invitation.id)
  if (recent.count >= resendsPerHour) {
    const freedAt = (recent.earliest ?? new Date()).getTime() + 3_600_000
    throw new ResendLimitReached(resendsPerHour, Math.max(1, Math.ceil((freedAt - Date.now()) / 1000)))
  }
  const expiresAt = expiryFrom(sender.ttlDays)
  const productRoles = invitation.productRoles as ProductRoles
  const role = invitation.role as NewMember['role']
  const { token, acceptUrl, delivery } = await mail(trx, sender, { organizationId, email: invitation.email, role, productRoles, expiresAt })
  await markResent(trx, invitation.id, hashInvitationToken(token), expiresAt)
  await recordAudit(trx, context, {
    organizationId,
    product: 'platform',
    entityType: 'invitation',
    entityId: invitation.id,
    action: 'invitation.resent',
    before: { expiresAt: invitation.expiresAt.toISOString(), status: invitation.status },
    after: { expiresAt: expiresAt.toISOString(), status: 'pending' },
  })
  return { invitationId: invitation.id, memberId: invitation.memberId, token, acceptUrl, expiresAt, delivery }
}

/**
 * Revokes a pending or expired invitation: its link answers 410 from now on, and the membership
 * it held open is removed. Revoking a revoked one changes nothing; an accepted one is a 409
 * (remove the member instead).
 */
export async function revokeInvitation(trx: Executor, context: AuditContext, organizationId: string, invitationId: string): Promise<void> {
  const invitation = await lockInvitation(trx, { organizationId, id: invitationId })
  if (!invitation) throw new NotFoundError('invitation')
  if (invitation.status === 'accepted') throw new ConflictError('the invitation was accepted: remove the member instead')
  if (invitation.status === 'revoked') return
  await markRevoked(trx, invitation.id, context.actor.type === 'user' ? context.actor.userId : null)
  if (invitation.memberId) await deleteUnjoinedMembership(trx, invitation.memberId)
  await recordAudit(trx, context, {
    organizationId,
    product: 'platform',
    entityType: 'invitation',
    entityId: invitation.id,
    action: 'invitation.revoked',
    before: { email: invitation.email, role: invitation.role, status: invitation.status },
  })
}

export interface Accepted {
  organization: { id: string; name: string; slug: string }
  memberId: string
  role: OrganizationRole
}

/**
 * Accepts an invitation by its token, for the signed-in account: only once, only before it
 * expires, only when the identity provider verified that the account's address is the invited
 * one, and not while impersonating. The waiting membership becomes the account's and starts to
 * grant its roles.
 */
export async function acceptInvitation(trx: Executor, context: AuditContext, token: string, userId: string): Promise<Accepted> {
  const invitation = await lockInvitation(trx, { tokenHash: hashInvitationToken(token) })
  if (!invitation) throw new NotFoundError('invitation')
  const organization = invitation.organizationName
  if (invitation.status === 'accepted') throw new GoneError(`this invitation to ${organization} was already accepted: it works once`)
  if (invitation.status === 'revoked' || invitation.memberId === null) {
    throw new GoneError(`this invitation to ${organization} was revoked: ask an admin of ${organization} for a new one`)
  }
  if (invitation.status === 'expired') {
    throw new GoneError(
      `this invitation to ${organization} expired at ${invitation.expiresAt.toISOString()}: ask an admin of ${organization} to resend it`,
    )
  }
  if (context.actor.type === 'user' && context.actor.originalUserId) {
    throw new ForbiddenError('an invitation cannot be accepted while impersonating: the invited person accepts it')
  }
  const account = await verifiedAddressOf(trx, userId)
  if (!account?.emailVerified) {
    throw new ForbiddenError('sign in with an address your identity provider has verified to accept an invitation')
  }
  if (account.email.toLowerCase() !== invitation.email.toLowerCase()) {
    throw new ForbiddenError(`this invitation was sent to ${invitation.email}: sign in with that address to accept it`)
  }
  const held = await membershipOfUser(trx, invitation.organizationId, userId)
  if (held && held.id !== invitation.memberId) throw new ConflictError(`you are already a member of ${organization}`)
  const role = (await joinMembership(trx, invitation.memberId, userId)) as OrganizationRole
  await markAccepted(trx, invitation.id, userId)
  await recordAudit(trx, context, {
    organizationId: invitation.organizationId,
    product: 'platform',
    entityType: 'invitation',
    entityId: invitation.id,
    action: 'invitation.accepted',
    before: { status: 'pending' },
    after: { status: 'accepted', memberId: invitation.memberId, userId },
  })
  await trackProductEvent(trx, {
    organizationId: invitation.organizationId,
    name: 'Invitation Accepted',
    userId,
    properties: { memberId: invitation.memberId, invitationId: invitation.id, role },
  })
  return {
    organization: { id: invitation.organizationId, name: organization, slug: invitation.organizationSlug },
    memberId: invitation.memberId,
    role,
  }
}
