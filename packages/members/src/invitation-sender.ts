import type { FastifyRequest } from 'fastify'
import { accountOf, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { findInvitation } from './invitation-queries.js'
import { sentInvitationBody } from './invitation-schemas.js'
import type { InvitationSender, SentInvitation } from './invitations.js'

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
