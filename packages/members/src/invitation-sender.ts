import type { FastifyRequest } from 'fastify'
import { auditContextOf } from '@svc/audit'
import { accountOf, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { findInvitation } from './invitation-queries.js'
import { sentInvitationBody } from './invitation-schemas.js'
import type { MemberOrigin, NewMember } from './add-member.js'
import { inviteMember, type InvitationSender, type SentInvitation } from './invitations.js'

/** What a service's invitation routes are given: the outbox and INVITATION_TTL_DAYS. */
export interface InvitationOptions {
  notifier: Notifier
  ttlDays: number
}

/** Who sends an invitation from this request: the organization of `:orgId` and the signed-in inviter. */
export function invitationSenderOf(request: FastifyRequest, options: InvitationOptions): InvitationSender {
  const inviter = accountOf(request)
  return {
    notifier: options.notifier,
    ttlDays: options.ttlDays,
    organizationName: membershipOf(request).organizationName,
    inviter: { email: inviter.email, displayName: inviter.displayName },
  }
}

/** The answer to a send or resend: the invitation as readers see it, with its link and e-mail. */
export async function sentInvitationAnswer(db: Executor, organizationId: string, sent: SentInvitation) {
  const row = await findInvitation(db, organizationId, sent.invitationId)
  if (!row) throw new NotFoundError('invitation')
  return sentInvitationBody(row, sent)
}

/**
 * Invites `member` to the organization of `:orgId` on behalf of the signed-in caller, in one
 * transaction, then wakes the notifier for the e-mail. The caller has judged the roles it grants.
 */
export async function sendInvitation(request: FastifyRequest, options: InvitationOptions, member: NewMember, origin: MemberOrigin) {
  const { organizationId } = membershipOf(request)
  const sent = await request.server.database.db
    .transaction()
    .execute((trx) => inviteMember(trx, auditContextOf(request), organizationId, member, origin, invitationSenderOf(request, options)))
  options.notifier.wake()
  return sent
}
