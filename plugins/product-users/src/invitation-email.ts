import type { OrganizationRole, Product } from '@svc/auth'
import type { ProductRoles } from '@svc/members'
import type { OutboundEmail } from '@svc/notifier'

const productNames: Record<Product, string> = {
  statuspages: 'Status pages',
  alerting: 'Alerting',
  synthetics: 'Synthetics',
  insights: 'Insights',
}

export interface Invitation {
  organizationId: string
  organizationName: string
  inviter: { email: string; displayName: string | null }
  email: string
  role: OrganizationRole
  productRoles: ProductRoles
  /** The web application, linked when configured (APP_URL). */
  appUrl?: string
}

/**
 * The invitation e-mail, plain text: who invited whom to which organization with which access,
 * and how to accept (signing in with the invited address claims the pending membership).
 */
export function invitationEmail(invitation: Invitation): OutboundEmail {
  const inviter = invitation.inviter.displayName
    ? `${invitation.inviter.displayName} (${invitation.inviter.email})`
    : invitation.inviter.email
  const access = Object.entries(invitation.productRoles).map(([product, role]) => `${productNames[product as Product]}: ${role}`)
  const where = invitation.appUrl ? ` at ${invitation.appUrl}` : ''
  const text = [
    'Hello,',
    '',
    `${inviter} invited you to join ${invitation.organizationName} as ${invitation.role === 'member' ? 'a member' : `an ${invitation.role}`}.`,
    access.length > 0 ? `Your access: ${access.join(', ')}.` : 'An admin of the organization will grant you access to its products.',
    '',
    `To accept, sign in${where} with this address, ${invitation.email}.`,
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
