import { Type } from 'typebox'
import type { Static } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { trackProductEvent } from '@svc/analytics'
import { auditContextOf, recordAudit } from '@svc/audit'
import { hasPlatformRole, membershipOf } from '@svc/auth'
import { ConflictError, ForbiddenError, ListResponse, NotFoundError, PaginationQuery, invalidField } from '@svc/http'
import { insertMember } from '@svc/members'
import {
  deleteOrganization,
  findOrganization,
  insertOrganization,
  listOrganizationsOfUser,
  lockOrganizationsCreatedBy,
  slugTaken,
  updateOrganization,
} from '../queries/organizations.js'
import { CreateOrganization, DeleteOrganization, OrgParams, Organization, type OrganizationRole, UpdateOrganization } from './schemas.js'
import { organizationBody, organizationFields } from './shape.js'
import { slugFromName, withSuffix } from './slug.js'
import { pageOf } from '@svc/db'

const tags = ['organizations']

/** Organizations (spec: "Platform API: organizations, members, roles, subscription"). */
/**
 * `billingEnabled`: an organization created now needs a plan for the products it writes to
 * (issue 17); without billing, organizations have every product (self-hosted use).
 */
export const organizationRoutes: FastifyPluginAsyncTypebox<{ billingEnabled: boolean; organizationsPerUser: number }> = async (
  app,
  options,
) => {
  const db = app.database.db

  app.get(
    '/api/v1/organizations',
    {
      schema: {
        tags,
        summary: 'The caller’s organizations, with the caller’s role in each',
        querystring: PaginationQuery,
        response: { 200: ListResponse(Organization) },
      },
    },
    async (request) => {
      const { page, limit } = request.query
      const { rows, total } = await listOrganizationsOfUser(db, request.user.userId, pageOf({ page, limit }))
      return { data: rows.map((row) => organizationBody(row, row.role as Static<typeof OrganizationRole>)), meta: { page, limit, total } }
    },
  )

  app.post(
    '/api/v1/organizations',
    {
      schema: {
        tags,
        summary: 'Create an organization; the creator becomes its owner',
        description: 'Without a slug, one is made from the name (with a short suffix when that one is taken).',
        body: CreateOrganization,
        response: { 201: Organization },
      },
    },
    async (request, reply) => {
      const { name, slug: requested } = request.body
      const created = await db.transaction().execute(async (trx) => {
        // Each organization brings its own AI allowance, so how many one person makes is bounded
        // (decision 0012, "Organizations and AI spend"); platform admins set organizations up for others.
        const made = await lockOrganizationsCreatedBy(trx, request.user.userId)
        if (made >= options.organizationsPerUser && !request.user.isPlatformAdmin && !hasPlatformRole(request))
          throw new ForbiddenError(
            `you have created ${made} organizations, the most one person may (ORGANIZATIONS_PER_USER); delete one or ask a platform admin`,
          )
        let slug = requested ?? slugFromName(name)
        if (await slugTaken(trx, slug)) {
          if (requested) throw new ConflictError(`the slug ${requested} is taken`)
          slug = withSuffix(slug)
        }
        const organization = await insertOrganization(trx, {
          name,
          slug,
          billingExempt: !options.billingEnabled,
          createdBy: request.user.userId,
        })
        const memberId = await insertMember(trx, organization.id, request.user.userId, 'owner')
        const context = auditContextOf(request)
        await recordAudit(trx, context, {
          organizationId: organization.id,
          product: 'platform',
          entityType: 'organization',
          entityId: organization.id,
          action: 'organization.created',
          after: organizationFields(organization),
        })
        await trackProductEvent(trx, { organizationId: organization.id, name: 'Organization Created', userId: request.user.userId })
        await recordAudit(trx, context, {
          organizationId: organization.id,
          product: 'platform',
          entityType: 'member',
          entityId: memberId,
          action: 'member.added',
          after: { userId: request.user.userId, role: 'owner' },
        })
        return organization
      })
      return reply.code(201).send(organizationBody(created, 'owner'))
    },
  )

  app.get(
    '/api/v1/organizations/:orgId',
    { schema: { tags, summary: 'Get an organization (member)', params: OrgParams, response: { 200: Organization } } },
    async (request) => {
      const membership = membershipOf(request)
      const organization = await findOrganization(db, membership.organizationId)
      if (!organization) throw new NotFoundError('organization')
      return organizationBody(organization, membership.role)
    },
  )

  app.patch(
    '/api/v1/organizations/:orgId',
    {
      schema: {
        tags,
        summary: 'Update an organization’s name or slug (admin, owner)',
        params: OrgParams,
        body: UpdateOrganization,
        response: { 200: Organization },
      },
      onRequest: app.requireOrgRole('admin', 'owner'),
    },
    async (request) => {
      const membership = membershipOf(request)
      const updated = await db.transaction().execute(async (trx) => {
        const before = await findOrganization(trx, membership.organizationId)
        if (request.body.slug && (await slugTaken(trx, request.body.slug, membership.organizationId))) {
          throw new ConflictError(`the slug ${request.body.slug} is taken`)
        }
        const after = await updateOrganization(trx, membership.organizationId, request.body)
        await recordAudit(trx, auditContextOf(request), {
          organizationId: after.id,
          product: 'platform',
          entityType: 'organization',
          entityId: after.id,
          action: 'organization.updated',
          before: before && organizationFields(before),
          after: organizationFields(after),
        })
        return after
      })
      return organizationBody(updated, membership.role)
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId',
    {
      schema: {
        tags,
        summary: 'Delete an organization and everything it owns (owner)',
        description: 'The body must confirm with the organization’s slug: `{"confirm": "<slug>"}`. The audit log is kept.',
        params: OrgParams,
        body: DeleteOrganization,
        response: { 204: Type.Null() },
      },
      onRequest: app.requireOrgRole('owner'),
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      if (request.body.confirm !== membership.organizationSlug) {
        throw invalidField('confirm', 'must be the organization’s slug')
      }
      await db.transaction().execute(async (trx) => {
        await deleteOrganization(trx, membership.organizationId)
        await recordAudit(trx, auditContextOf(request), {
          organizationId: membership.organizationId,
          product: 'platform',
          entityType: 'organization',
          entityId: membership.organizationId,
          action: 'organization.deleted',
          before: { name: membership.organizationName, slug: membership.organizationSlug },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
