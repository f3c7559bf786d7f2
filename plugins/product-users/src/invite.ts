import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { hasPlatformRole, membershipOf, organizationRoles, products } from '@svc/auth'
import { ForbiddenError, NotFoundError } from '@svc/http'
import {
  findMemberWithProductRoles,
  sendInvitation,
  inviteRefusal,
  ProductRolesSchema,
  sentInvitationAnswer,
  SentInvitationResponse,
  type AdministeredProducts,
  type InvitationOptions,
} from '@svc/members'
import { OrganizationUser, organizationUserBody } from './organization-user.js'

export type InviteOptions = InvitationOptions

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
    invitation: SentInvitationResponse,
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
 * `POST /organizations/:orgId/users/invite`: the platform's invitation (the same rules as its
 * `POST …/members` and `POST …/invitations`), a membership that grants nothing until accepted,
 * and the invitation e-mail written to the outbox in the same transaction.
 */
export const inviteRoutes: FastifyPluginAsyncTypebox<InviteOptions> = async (app, options) => {
  const db = app.database.db

  app.post(
    '/api/v1/organizations/:orgId/users/invite',
    {
      schema: {
        tags: ['users'],
        summary: 'Invite a user by e-mail (organization admin or owner, or a product admin)',
        description:
          'Sends an invitation: the membership is listed at once (`invited: true`) and grants nothing until the invited person accepts it (`POST /api/v1/invitations/accept` on the platform API, signed in with the invited address). ' +
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

      const sent = await sendInvitation(request, options, { email, role, productRoles }, 'member.invited')

      const found = await findMemberWithProductRoles(db, membership.organizationId, sent.memberId)
      if (!found) throw new NotFoundError('member')
      const invitation = await sentInvitationAnswer(db, membership.organizationId, sent)
      return reply.code(201).send({ ...organizationUserBody(found.member, found.productRoles), invitation })
    },
  )
}
