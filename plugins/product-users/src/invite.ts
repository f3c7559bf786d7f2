import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { auditContextOf } from '@svc/audit'
import { accountOf, hasPlatformRole, membershipOf, organizationRoles, products } from '@svc/auth'
import { ForbiddenError, NotFoundError } from '@svc/http'
import { addMember, findMemberWithProductRoles, inviteRefusal, ProductRolesSchema, type AdministeredProducts } from '@svc/members'
import type { Notifier } from '@svc/notifier'
import { invitationEmail } from './invitation-email.js'
import { OrganizationUser, organizationUserBody } from './organization-user.js'

export interface InviteOptions {
  notifier: Notifier
}

const InviteBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    role: Type.Enum(organizationRoles, {
      default: 'member',
      description: 'The organization role; admin and owner only from organization admins and owners',
    }),
    productRoles: Type.Optional(ProductRolesSchema),
  },
  { additionalProperties: false },
)

const Invited = Type.Object(
  {
    ...OrganizationUser.properties,
    invitation: Type.Object({
      messageId: Type.String({ format: 'uuid', description: 'The invitation e-mail in the outbox' }),
      status: Type.Enum(['pending', 'held'], {
        description: 'pending: queued for delivery; held: no e-mail provider is configured, the message waits in the outbox',
      }),
    }),
  },
  { title: 'InvitedUser' },
)

/** The products the caller administers; a platform role holds every product role. */
async function administeredProducts(request: FastifyRequest): Promise<AdministeredProducts> {
  if (hasPlatformRole(request)) return 'all'
  const held = await request.heldProductRoles()
  return products.filter((product) => held.get(product) === 'admin')
}

/**
 * `POST /organizations/:orgId/users/invite`: the pending membership the platform shares (the
 * same rules as its `POST …/members`), and an invitation e-mail written to the outbox in the
 * same transaction.
 */
export const inviteRoutes: FastifyPluginAsyncTypebox<InviteOptions> = async (app, { notifier }) => {
  const db = app.database.db

  app.post(
    '/api/v1/organizations/:orgId/users/invite',
    {
      schema: {
        tags: ['users'],
        summary: 'Invite a user by e-mail (organization admin or owner, or a product admin)',
        description:
          'Creates the membership (pending until the first sign-in with this e-mail; an existing account joins at once) and queues an invitation e-mail. ' +
          'A product admin who is not an organization admin invites members only, with roles in the products they administer.',
        params: Type.Object({ orgId: Type.String() }),
        body: InviteBody,
        response: { 201: Invited },
      },
      onRequest: app.requireOrgRoleOrAnyProductRole(['admin', 'owner'], 'admin'),
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      const { email, role, productRoles = {} } = request.body
      const administers = membership.role === 'member' ? await administeredProducts(request) : []
      const refusal = inviteRefusal(membership.role, administers, role, productRoles)
      if (refusal) throw new ForbiddenError(refusal)

      const inviter = accountOf(request)
      const { memberId, invitation } = await db.transaction().execute(async (trx) => {
        const added = await addMember(
          trx,
          auditContextOf(request),
          membership.organizationId,
          { email, role, productRoles },
          'member.invited',
        )
        const message = invitationEmail({
          organizationId: membership.organizationId,
          organizationName: membership.organizationName,
          inviter: { email: inviter.email, displayName: inviter.displayName },
          email,
          role,
          productRoles,
          appUrl: notifier.config.appUrl,
        })
        return { memberId: added.memberId, invitation: await notifier.queueEmail(trx, message) }
      })
      notifier.wake()

      const found = await findMemberWithProductRoles(db, membership.organizationId, memberId)
      if (!found) throw new NotFoundError('member')
      return reply.code(201).send({ ...organizationUserBody(found.member, found.productRoles), invitation })
    },
  )
}
