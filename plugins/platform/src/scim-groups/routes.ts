import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ListResponse, NotFoundError, PaginationQuery, Timestamp } from '@svc/http'
import { ProductRoles, ProductRolesBody } from '../members/schemas.js'
import { OrgParams } from '../organizations/schemas.js'
import type { ProductRoles as ProductRoleMap } from '@svc/members'
import { countGroupMembers, findScimGroup, listScimGroups, setGroupProductRoles, type ScimGroupRow } from '../queries/scim-groups.js'
import { pageOf } from '@svc/db'

// What a SCIM Group grants. Identity providers push groups and their members; an organization
// admin decides here what membership of each group gives: product roles, added to whatever the
// member holds directly (the highest role wins).

const tags = ['scim groups']

const ScimGroupBinding = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    displayName: Type.String(),
    externalId: Type.Union([Type.String(), Type.Null()]),
    memberCount: Type.Integer(),
    productRoles: ProductRoles,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'ScimGroupBinding' },
)

function bindingBody(row: ScimGroupRow, memberCount: number) {
  return {
    id: row.id,
    displayName: row.displayName,
    externalId: row.externalId,
    memberCount,
    // Written only through ProductRolesBody, so the stored JSON has its shape.
    productRoles: row.productRoles as ProductRoleMap,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export const scimGroupBindingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const adminOrOwner = app.requireOrgRole('admin', 'owner')
  const GroupParams = Type.Object({ orgId: Type.String(), groupId: Type.String() })

  app.get(
    '/api/v1/organizations/:orgId/scim-groups',
    {
      schema: {
        tags,
        summary: 'SCIM Groups and the product roles each grants (admin, owner)',
        params: OrgParams,
        querystring: PaginationQuery,
        response: { 200: ListResponse(ScimGroupBinding) },
      },
      onRequest: adminOrOwner,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { page, limit } = request.query
      const { rows, total } = await listScimGroups(db, organizationId, undefined, pageOf({ page, limit }))
      const counts = await countGroupMembers(
        db,
        organizationId,
        rows.map((row) => row.id),
      )
      return { data: rows.map((row) => bindingBody(row, counts.get(row.id) ?? 0)), meta: { page, limit, total } }
    },
  )

  app.put(
    '/api/v1/organizations/:orgId/scim-groups/:groupId/product-roles',
    {
      schema: {
        tags,
        summary: 'Set the product roles a SCIM Group grants its members (admin, owner)',
        params: GroupParams,
        body: ProductRolesBody,
        response: { 200: ScimGroupBinding },
      },
      onRequest: adminOrOwner,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const { groupId } = request.params
      const updated = await db.transaction().execute(async (trx) => {
        const before = await findScimGroup(trx, organizationId, groupId, true)
        if (!before) throw new NotFoundError('SCIM group')
        const after = await setGroupProductRoles(trx, organizationId, groupId, request.body.productRoles)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'scim_group',
          entityId: groupId,
          action: 'scim_group.product_roles_set',
          before: { productRoles: before.productRoles },
          after: { productRoles: request.body.productRoles },
        })
        return after ?? before
      })
      const counts = await countGroupMembers(db, organizationId, [groupId])
      return bindingBody(updated, counts.get(groupId) ?? 0)
    },
  )
}
