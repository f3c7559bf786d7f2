import { Type, type Static } from 'typebox'
import { organizationRoles, type OrganizationRole as Role } from '@svc/auth'
import { invitationStatuses, type InvitationRow } from './invitation-queries.js'
import type { SentInvitation } from './invitations.js'
import { ProductRoles } from './schemas.js'

const OrganizationRole = Type.Enum(organizationRoles)

export const InvitationStatus = Type.Enum(invitationStatuses, {
  description:
    'pending: waiting for the invited person; accepted: they joined; revoked: withdrawn, or the waiting member was removed; expired: past `expiresAt` (resend it to renew)',
})

export const Invitation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organizationId: Type.String({ format: 'uuid' }),
    email: Type.String({ description: 'The invited address: only a verified sign-in with it can accept' }),
    role: OrganizationRole,
    productRoles: ProductRoles,
    status: InvitationStatus,
    memberId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'The membership the invitation holds open (it grants nothing until accepted); null once revoked',
    }),
    invitedBy: Type.Union([Type.Object({ userId: Type.String({ format: 'uuid' }), email: Type.String() }), Type.Null()]),
    expiresAt: Type.String({ format: 'date-time' }),
    sentCount: Type.Integer({ minimum: 1, description: 'E-mails sent: the first and each resend' }),
    lastSentAt: Type.String({ format: 'date-time' }),
    acceptedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Invitation' },
)

/** What the sender learns once, when the invitation is sent or resent: the link is not stored. */
export const SentInvitationFields = {
  acceptUrl: Type.Union([Type.String(), Type.Null()], {
    description:
      'The accept link (APP_URL/invitations/accept?token=…), shown only in this answer and the e-mail; null when no APP_URL is configured. It works only for a verified sign-in with the invited address.',
  }),
  delivery: Type.Object({
    messageId: Type.String({ format: 'uuid', description: 'The invitation e-mail in the outbox' }),
    status: Type.Enum(['pending', 'held'], {
      description: 'pending: queued for delivery; held: no e-mail provider is configured, the message waits in the outbox',
    }),
  }),
}

export const SentInvitationResponse = Type.Object({ ...Invitation.properties, ...SentInvitationFields }, { title: 'SentInvitation' })

export function invitationBody(row: InvitationRow): Static<typeof Invitation> {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    role: row.role as Role,
    productRoles: row.productRoles as Static<typeof ProductRoles>,
    status: row.status,
    memberId: row.memberId,
    invitedBy: row.invitedBy && row.invitedByEmail ? { userId: row.invitedBy, email: row.invitedByEmail } : null,
    expiresAt: row.expiresAt.toISOString(),
    sentCount: row.sentCount,
    lastSentAt: row.lastSentAt.toISOString(),
    acceptedAt: row.acceptedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

export function sentInvitationBody(row: InvitationRow, sent: SentInvitation): Static<typeof SentInvitationResponse> {
  return { ...invitationBody(row), acceptUrl: sent.acceptUrl, delivery: sent.delivery }
}
