import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { generateApiToken, membershipOf, productRoleAtLeast, productRolesOf } from '@svc/auth'
import { NotFoundError, Timestamp, invalidField } from '@svc/http'
import { ProductRoles } from '../members/schemas.js'
import { OrgParams } from '../organizations/schemas.js'
import { findApiToken, insertApiToken, listApiTokens, revokeApiToken, type ApiTokenRow } from './queries.js'

const tags = ['api tokens']
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const ApiToken = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the token, to tell tokens apart' }),
    productRoles: ProductRoles,
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The person the token acts for' }),
    createdAt: Timestamp,
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'After this, the token authenticates nothing; null: no end',
    }),
    lastUsedAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
  },
  { title: 'ApiToken' },
)
const CreatedApiToken = Type.Object(
  {
    ...ApiToken.properties,
    token: Type.String({ description: 'The token itself (dvx_…). Shown once: only its SHA-256 hash is kept.' }),
  },
  { title: 'CreatedApiToken' },
)

function tokenBody(row: ApiTokenRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.tokenPrefix,
    productRoles: Object.fromEntries(productRolesOf(row.productRoles)),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  }
}

/**
 * Organization API tokens for automation (decision 0030): admins and owners list, create and
 * revoke them; a token is used as `Authorization: Bearer dvx_…` on the organization's routes of
 * both services, where it acts for its creator with the product roles it names.
 */
export const apiTokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const adminOrOwner = app.requireOrgRole('admin', 'owner')

  app.get(
    '/api/v1/organizations/:orgId/api-tokens',
    {
      schema: {
        tags,
        summary: 'List API tokens (admin, owner)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(ApiToken) }) },
      },
      onRequest: adminOrOwner,
    },
    async (request) => ({ data: (await listApiTokens(db, membershipOf(request).organizationId)).map(tokenBody) }),
  )

  app.post(
    '/api/v1/organizations/:orgId/api-tokens',
    {
      schema: {
        tags,
        summary: 'Create an API token (admin, owner); the answer is the only time the token is shown',
        description:
          "Send it as `Authorization: Bearer dvx_…` to the organization's routes of the platform and product APIs. It holds the organization role member and the product roles named here, none above its creator's (refused with 400 otherwise) and capped by its creator's at every request; it stops working when revoked, past `expiresAt`, or when its creator leaves the organization or is suspended. Personal routes (`/users/me`) and platform-admin routes refuse it with 403. Each token may make 1,200 requests a minute.",
        params: OrgParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'e.g. "CI: config as code"' }),
            productRoles: ProductRoles,
            expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the token stops working; in the future' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedApiToken },
      },
      onRequest: adminOrOwner,
    },
    async (request, reply) => {
      const membership = membershipOf(request)
      const { organizationId } = membership
      const expiresAt = request.body.expiresAt === undefined ? null : new Date(request.body.expiresAt)
      if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalidField('expiresAt', 'must be in the future')
      const wanted = productRolesOf(request.body.productRoles)
      if (wanted.size === 0) throw invalidField('productRoles', 'must name at least one product')
      if (membership.role !== 'owner') {
        const held = await request.heldProductRoles()
        for (const [product, role] of wanted)
          if (!productRoleAtLeast(held.get(product), role))
            throw invalidField(`productRoles/${product}`, `is above your own role there (${held.get(product) ?? 'none'})`)
      }
      const { token, prefix, hash } = generateApiToken()
      const created = await db.transaction().execute(async (trx) => {
        const row = await insertApiToken(trx, {
          organizationId,
          name: request.body.name.trim(),
          tokenPrefix: prefix,
          tokenHash: hash,
          productRoles: Object.fromEntries(wanted),
          createdBy: request.user.userId,
          expiresAt,
        })
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'api_token',
          entityId: row.id,
          action: 'api_token.created',
          after: { name: row.name, prefix, productRoles: Object.fromEntries(wanted), expiresAt: row.expiresAt?.toISOString() ?? null },
        })
        return row
      })
      return reply.code(201).send({ ...tokenBody(created), token })
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/api-tokens/:tokenId',
    {
      schema: {
        tags,
        summary: 'Revoke an API token (admin, owner); it fails authentication at once',
        params: Type.Object({ ...OrgParams.properties, tokenId: Type.String({ format: 'uuid' }) }),
        response: { 204: Type.Null() },
      },
      onRequest: adminOrOwner,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await findApiToken(trx, organizationId, request.params.tokenId)
        if (!before) throw new NotFoundError('API token')
        if (before.revokedAt) return
        const after = await revokeApiToken(trx, organizationId, before.id)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'api_token',
          entityId: before.id,
          action: 'api_token.revoked',
          before: { revokedAt: null },
          after: { revokedAt: after?.revokedAt?.toISOString() ?? null },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
