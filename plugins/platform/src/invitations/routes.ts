import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { pageOf, type Executor } from '@svc/db'
import { ForbiddenError, ListResponse, NotFoundError, TooManyRequestsError } from '@svc/http'
import {
  acceptInvitation,
  findInvitation,
  Invitation,
  invitationBody,
  invitationSenderOf,
  sendInvitation,
  listInvitations,
  resendInvitation,
  ResendLimitReached,
  revokeInvitation,
  roleChangeRefusal,
  sentInvitationAnswer,
  SentInvitationResponse,
  type InvitationOptions,
} from '@svc/members'
import { OrgParams } from '../organizations/schemas.js'
import { AcceptedInvitation, AcceptInvitation, CreateInvitation, InvitationListQuery, InvitationParams } from './schemas.js'

/** Resends of one invitation per hour: enough to fix a typo'd spam filter, not enough to mail-bomb the address. */
export const RESENDS_PER_HOUR = 3

const tags = ['invitations']

/**
 * Invitations (decision 0023): an organization's admins and owners list, send, resend and revoke
 * them; the invited person accepts one with the token of its link, signed in with the invited
 * address. `POST …/members` and the product API's `users/invite` send the same invitation.
 */
export const invitationRoutes: FastifyPluginAsyncTypebox<InvitationOptions> = async (app, options) => {
  const db = app.database.db

  app.get(
    '/api/v1/organizations/:orgId/invitations',
    {
      schema: {
        tags,
        summary: 'List invitations (admin, owner), newest first; filter by status',
        params: OrgParams,
        querystring: InvitationListQuery,
        response: { 200: ListResponse(Invitation) },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const { page, limit, status } = request.query
      const { rows, total } = await listInvitations(db, membershipOf(request).organizationId, { status, ...pageOf({ page, limit }) })
      return { data: rows.map(invitationBody), meta: { page, limit, total } }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/invitations',
    {
      schema: {
        tags,
        summary: 'Invite someone by e-mail (admin, owner)',
        description:
          'Creates a membership that grants nothing until accepted, and e-mails the accept link. The same as `POST …/members`, answered as the invitation.',
        params: OrgParams,
        body: CreateInvitation,
        response: { 201: SentInvitationResponse },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      const refusal = roleChangeRefusal(membership.role, undefined, request.body.role)
      if (refusal) throw new ForbiddenError(refusal)
      const sent = await sendInvitation(request, options, request.body, 'member.added')
      return reply.code(201).send(await sentInvitationAnswer(db, membership.organizationId, sent))
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/invitations/:invitationId',
    {
      schema: { tags, summary: 'Get an invitation (admin, owner)', params: InvitationParams, response: { 200: Invitation } },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const row = await findInvitation(db, membershipOf(request).organizationId, request.params.invitationId)
      if (!row) throw new NotFoundError('invitation')
      return invitationBody(row)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/invitations/:invitationId/resend',
    {
      schema: {
        tags,
        summary: 'Resend an invitation (admin, owner): a new link and a new expiry',
        description: `The previous link stops working. At most ${RESENDS_PER_HOUR} resends of one invitation an hour (429 with Retry-After past that). An accepted or revoked invitation is a 409.`,
        params: InvitationParams,
        response: { 200: SentInvitationResponse },
      },
      // Counted by the resend itself (`resendInvitation`), after the access rule: a request
      // that fails it spends nothing of the invitation's resends.
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const resend = (trx: Executor) =>
        resendInvitation(
          trx,
          auditContextOf(request),
          organizationId,
          request.params.invitationId,
          invitationSenderOf(request, options),
          RESENDS_PER_HOUR,
        )
      const sent = await db
        .transaction()
        .execute(resend)
        .catch((error: unknown) => {
          if (!(error instanceof ResendLimitReached)) throw error
          reply.header('retry-after', String(error.retryAfterSeconds))
          throw new TooManyRequestsError(error.message)
        })
      options.notifier.wake()
      return sentInvitationAnswer(db, organizationId, sent)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/invitations/:invitationId',
    {
      schema: {
        tags,
        summary: 'Revoke an invitation (admin, owner)',
        description:
          'Its link answers 410 from now on and the membership it held open is removed. Revoking a revoked invitation changes nothing; an accepted one is a 409 (remove the member instead).',
        params: InvitationParams,
        response: { 204: Type.Null() },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute((trx) => revokeInvitation(trx, auditContextOf(request), organizationId, request.params.invitationId))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/v1/invitations/accept',
    {
      schema: {
        tags,
        summary: 'Accept an invitation (the invited person, signed in)',
        description:
          'Needs a sign-in whose address the identity provider verified and which is the invited one (403 otherwise). Works once, before `expiresAt`: an accepted, revoked or expired invitation answers 410 with what to do. An unknown token is a 404.',
        body: AcceptInvitation,
        response: { 200: AcceptedInvitation },
      },
    },
    async (request) => {
      return db.transaction().execute((trx) => acceptInvitation(trx, auditContextOf(request), request.body.token, request.user.userId))
    },
  )
}
