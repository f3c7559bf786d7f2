import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { lastActiveInOrganization, membershipOf, productRoles, products } from '@svc/auth'
import { ConflictError, ForbiddenError, ListResponse, NotFoundError, invalidField } from '@svc/http'
import {
  findMemberWithProductRoles,
  sendInvitation,
  sentInvitationAnswer,
  SentInvitationResponse,
  type InvitationOptions,
  listMembers,
  productRolesOfMembers,
  roleChangeRefusal,
  setMemberRole,
} from '@svc/members'
import { OrgParams } from '../organizations/schemas.js'
import { changeRole, lockedMembers, removeMember, setProductRoles } from './membership-changes.js'
import {
  AddMember,
  ChangeRole,
  Member,
  MemberListQuery,
  MemberParams,
  ProductRoleOptions,
  ProductRolesBody,
  ReplaceMember,
  TransferOwnership,
} from './schemas.js'
import { memberBody } from './shape.js'
import { pageOf } from '@svc/db'

const tags = ['members']

/** Members, their organization roles and product roles, and ownership transfer. */
export const memberRoutes: FastifyPluginAsyncTypebox<InvitationOptions> = async (app, invitations) => {
  const db = app.database.db

  async function memberResponse(organizationId: string, memberId: string) {
    const found = await findMemberWithProductRoles(db, organizationId, memberId)
    if (!found) throw new NotFoundError('member')
    return memberBody(found.member, found.productRoles)
  }

  app.get(
    '/api/v1/organizations/:orgId/members',
    {
      schema: {
        tags,
        summary: 'List members (member): filter by role, search by e-mail',
        params: OrgParams,
        querystring: MemberListQuery,
        response: { 200: ListResponse(Member) },
      },
    },
    async (request) => {
      const { organizationId, role: viewerRole } = membershipOf(request)
      const { page, limit, role, search } = request.query
      const { rows, total } = await listMembers(db, organizationId, { role, search, ...pageOf({ page, limit }) })
      const roles = await productRolesOfMembers(
        db,
        organizationId,
        rows.map((row) => row.id),
      )
      const lastActive =
        viewerRole === 'admin' || viewerRole === 'owner'
          ? await lastActiveInOrganization(
              db,
              organizationId,
              rows.map((row) => row.id),
            )
          : undefined
      return {
        data: rows.map((row) => memberBody(row, roles.get(row.id) ?? {}, lastActive && (lastActive.get(row.id) ?? null))),
        meta: { page, limit, total },
      }
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/members',
    {
      schema: {
        tags,
        summary: 'Invite a member by e-mail (admin, owner)',
        description:
          'Sends an invitation (see `POST …/invitations`): the membership is listed at once with `invited: true` and grants nothing until the invited person accepts. An unknown address becomes a pending user that the first verified sign-in with it links.',
        params: OrgParams,
        body: AddMember,
        response: { 201: Type.Object({ ...Member.properties, invitation: SentInvitationResponse }, { title: 'InvitedMember' }) },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      const refusal = roleChangeRefusal(membership.role, undefined, request.body.role)
      if (refusal) throw new ForbiddenError(refusal)
      const sent = await sendInvitation(request, invitations, request.body, 'member.added')
      const invitation = await sentInvitationAnswer(db, membership.organizationId, sent)
      return reply.code(201).send({ ...(await memberResponse(membership.organizationId, sent.memberId)), invitation })
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId/members/:memberId',
    {
      schema: {
        tags,
        summary: 'Change a member’s organization role (owner)',
        params: MemberParams,
        body: ChangeRole,
        response: { 200: Member },
      },
      onRequest: app.requireOrgRole('owner'),
    },
    async (request) => {
      const membership = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const { actorRole, target } = await lockedMembers(trx, membership, request.params.memberId)
        await changeRole(trx, request, actorRole, target, request.body.role)
      })
      return memberResponse(membership.organizationId, request.params.memberId)
    },
  )

  app.put(
    '/api/v1/organizations/:orgId/members/:memberId',
    {
      schema: {
        tags,
        summary: 'Set a member’s role and product roles together (admin, owner)',
        params: MemberParams,
        body: ReplaceMember,
        response: { 200: Member },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const membership = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const { actorRole, target } = await lockedMembers(trx, membership, request.params.memberId)
        await setProductRoles(trx, request, actorRole, target, request.body.productRoles)
        await changeRole(trx, request, actorRole, target, request.body.role)
      })
      return memberResponse(membership.organizationId, request.params.memberId)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/members/:memberId',
    {
      schema: {
        tags,
        summary: 'Remove a member (admin, owner); the last owner cannot leave',
        params: MemberParams,
        response: { 204: Type.Null() },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const { actorRole, target } = await lockedMembers(trx, membership, request.params.memberId)
        await removeMember(trx, request, actorRole, target)
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/v1/organizations/:orgId/transfer-ownership',
    {
      schema: {
        tags,
        summary: 'Make another member the owner; the caller becomes an admin (owner)',
        params: OrgParams,
        body: TransferOwnership,
        response: { 200: Type.Object({ previousOwner: Member, newOwner: Member }) },
      },
      onRequest: app.requireOrgRole('owner'),
    },
    async (request) => {
      const membership = membershipOf(request)
      if (request.body.memberId === membership.memberId) throw invalidField('memberId', 'is the caller: choose another member')
      await db.transaction().execute(async (trx) => {
        const { actorRole, target } = await lockedMembers(trx, membership, request.body.memberId)
        if (actorRole !== 'owner') throw new ForbiddenError('only an owner can transfer ownership')
        const inactive = target.invited
          ? 'invited and has not accepted yet'
          : target.pending
            ? 'pending (never signed in)'
            : target.suspended
              ? 'suspended by the identity provider'
              : undefined
        if (inactive) throw new ConflictError(`ownership goes only to an active member: this one is ${inactive}`)
        await setMemberRole(trx, membership.organizationId, target.id, 'owner')
        await setMemberRole(trx, membership.organizationId, membership.memberId, 'admin')
        await recordAudit(trx, auditContextOf(request), {
          organizationId: membership.organizationId,
          product: 'platform',
          entityType: 'organization',
          entityId: membership.organizationId,
          action: 'organization.ownership_transferred',
          before: { ownerMemberId: membership.memberId, targetRole: target.role },
          after: { ownerMemberId: target.id, previousOwnerRole: 'admin' },
        })
      })
      return {
        previousOwner: await memberResponse(membership.organizationId, membership.memberId),
        newOwner: await memberResponse(membership.organizationId, request.body.memberId),
      }
    },
  )

  app.get(
    '/api/v1/organizations/:orgId/product-role-options',
    {
      schema: {
        tags,
        summary: 'Products and the product-role hierarchy (member)',
        params: OrgParams,
        response: { 200: ProductRoleOptions },
      },
    },
    async () => ({ products: [...products], roles: [...productRoles] }),
  )

  app.get(
    '/api/v1/organizations/:orgId/members/:memberId/product-roles',
    { schema: { tags, summary: 'A member’s product roles (member)', params: MemberParams, response: { 200: ProductRolesBody } } },
    async (request) => ({
      productRoles: (await memberResponse(membershipOf(request).organizationId, request.params.memberId)).productRoles,
    }),
  )

  app.put(
    '/api/v1/organizations/:orgId/members/:memberId/product-roles',
    {
      schema: {
        tags,
        summary: 'Replace a member’s product roles (admin, owner)',
        description: 'The body is the whole set: one role per product; a product left out has no role.',
        params: MemberParams,
        body: ProductRolesBody,
        response: { 200: ProductRolesBody },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const membership = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const { actorRole, target } = await lockedMembers(trx, membership, request.params.memberId)
        await setProductRoles(trx, request, actorRole, target, request.body.productRoles)
      })
      return { productRoles: (await memberResponse(membership.organizationId, request.params.memberId)).productRoles }
    },
  )
}
