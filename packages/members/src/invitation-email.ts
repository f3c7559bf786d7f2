import type { OrganizationRole, Product } from '@svc/auth'
import type { OutboundEmail } from '@svc/notifier'
import type { ProductRoles } from './queries.js'

const productNames: Record<Product, string> = {
  statuspages: 'Status pages',
  alerting: 'Alerting',
  synthetics: 'Synthetics',
  insights: 'Insights',
}

export interface InvitationLetter {
  organizationId: string
  organizationName: string
  inviter: { email: string; displayName: string | null }
  email: string
  role: OrganizationRole
  productRoles: ProductRoles
  /** The accept token, sent only here (the database keeps its hash). */
  token: string
  /** The web application's accept page, when APP_URL is configured. */
  acceptUrl: string | null
  expiresAt: Date
}

/**
 * The invitation e-mail, plain text: who invited whom to which organization with which access,
 * and how to accept: the link (or, with no web application configured, the token and the API
 * call), signed in with this very address, before it expires.
 */
export function invitationEmail(invitation: InvitationLetter): OutboundEmail {
  const inviter = invitation.inviter.displayName
    ? `${invitation.inviter.displayName} (${invitation.inviter.email})`
    : invitation.inviter.email
  const access = Object.entries(invitation.productRoles).map(([product, role]) => `${productNames[product as Product]}: ${role}`)
  const howToAccept = invitation.acceptUrl
    ? [`To accept, open ${invitation.acceptUrl} and sign in with this address, ${invitation.email}.`]
    : [
        `To accept, sign in with this address, ${invitation.email}, and send this invitation token`,
        `to POST /api/v1/invitations/accept: ${invitation.token}`,
      ]
  const text = [
    'Hello,',
    '',
    `${inviter} invited you to join ${invitation.organizationName} as ${invitation.role === 'member' ? 'a member' : `an ${invitation.role}`}.`,
    access.length > 0 ? `Your access: ${access.join(', ')}.` : 'An admin of the organization will grant you access to its products.',
    '',
    ...howToAccept,
    `The invitation expires on ${invitation.expiresAt.toUTCString()} and works once.`,
    '',
    'If you did not expect this invitation, you can ignore this e-mail.',
  ].join('\n')
  return {
    organizationId: invitation.organizationId,
    kind: 'member.invitation',
    to: invitation.email,
    subject: `You are invited to ${invitation.organizationName}`,
    text,
  }
}
