import type { FastifyInstance } from 'fastify'
import type { SignedIn } from './service.js'

/**
 * The accept token of the latest invitation e-mail to `email`, read from the outbox: what the
 * invited person finds in their mailbox (the database keeps only the token's hash).
 */
export async function invitationTokenFor(app: FastifyInstance, email: string): Promise<string> {
  const message = await app.database.db
    .selectFrom('core.outbox')
    .select('bodyText')
    .where('kind', '=', 'member.invitation')
    .where((eb) => eb(eb.fn<string>('lower', ['recipient']), '=', email.toLowerCase()))
    .orderBy('createdAt', 'desc')
    .executeTakeFirst()
  const token = message?.bodyText.match(/inv_[A-Za-z0-9_-]+/)?.[0]
  if (!token) throw new Error(`no invitation e-mail to ${email} in the outbox`)
  return token
}

/** The invited person accepts their latest invitation, signed in, as the accept link would have them do. */
export async function acceptInvitationOf(app: FastifyInstance, invitee: SignedIn): Promise<void> {
  const token = await invitationTokenFor(app, invitee.email)
  const response = await app.inject({ method: 'POST', url: '/api/v1/invitations/accept', headers: invitee.headers, payload: { token } })
  if (response.statusCode !== 200) throw new Error(`${invitee.email} could not accept: ${response.statusCode} ${response.body}`)
}
