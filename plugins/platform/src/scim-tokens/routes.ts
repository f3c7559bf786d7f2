import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { generateScimToken, membershipOf } from '@svc/auth'
import { NotFoundError, Timestamp, invalidField } from '@svc/http'
import { OrgParams } from '../organizations/schemas.js'
import { findScimToken, insertScimToken, listScimTokens, revokeScimToken } from '../queries/scim-tokens.js'

const tags = ['scim tokens']
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])

const ScimToken = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the token, to tell tokens apart' }),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'After this, the token authenticates nothing; null: no end',
    }),
    lastUsedAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
  },
  { title: 'ScimToken' },
)
const CreatedScimToken = Type.Object(
  { ...ScimToken.properties, token: Type.String({ description: 'The token itself. Shown once: only its SHA-256 hash is kept.' }) },
  { title: 'CreatedScimToken' },
)

type Row = Awaited<ReturnType<typeof listScimTokens>>[number]
function tokenBody(row: Row) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.tokenPrefix,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  }
}

/** SCIM tokens of an organization (spec: "SSO/SAML and SCIM tokens"), admin and owner only. */
export const scimTokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const adminOrOwner = app.requireOrgRole('admin', 'owner')

  app.get(
    '/api/v1/organizations/:orgId/scim-tokens',
    {
      schema: {
        tags,
        summary: 'List SCIM tokens (admin, owner)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(ScimToken) }) },
      },
      onRequest: adminOrOwner,
    },
    async (request) => ({ data: (await listScimTokens(db, membershipOf(request).organizationId)).map(tokenBody) }),
  )

  app.post(
    '/api/v1/organizations/:orgId/scim-tokens',
    {
      schema: {
        tags,
        summary: 'Create a SCIM token (admin, owner); the answer is the only time the token is shown',
        params: OrgParams,
        description:
          'The token acts while it is not revoked, not past `expiresAt`, and its creator is still an active admin or owner; a token minted by an admin cannot suspend, deprovision or change an owner.',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. "Okta production"' }),
            expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the token stops working; in the future' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedScimToken },
      },
      onRequest: adminOrOwner,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const expiresAt = request.body.expiresAt === undefined ? null : new Date(request.body.expiresAt)
      if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalidField('expiresAt', 'must be in the future')
      const { token, prefix, hash } = generateScimToken()
      const created = await db.transaction().execute(async (trx) => {
        const row = await insertScimToken(trx, {
          organizationId,
          name: request.body.name,
          tokenPrefix: prefix,
          tokenHash: hash,
          createdBy: request.user.userId,
          expiresAt,
        })
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'scim_token',
          entityId: row.id,
          action: 'scim_token.created',
          after: { name: row.name, prefix, expiresAt: row.expiresAt?.toISOString() ?? null },
        })
        return row
      })
      return reply.code(201).send({ ...tokenBody(created), token })
    },
  )

  app.delete(
    '/api/v1/organizations/:orgId/scim-tokens/:id',
    {
      schema: {
        tags,
        summary: 'Revoke a SCIM token (admin, owner); it fails SCIM authentication at once',
        params: Type.Object({ orgId: Type.String(), id: Type.String() }),
        response: { 204: Type.Null() },
      },
      onRequest: adminOrOwner,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const before = await findScimToken(trx, organizationId, request.params.id)
        if (!before) throw new NotFoundError('SCIM token')
        if (before.revokedAt) return
        const after = await revokeScimToken(trx, organizationId, request.params.id)
        await recordAudit(trx, auditContextOf(request), {
          organizationId,
          product: 'platform',
          entityType: 'scim_token',
          entityId: before.id,
          action: 'scim_token.revoked',
          before: { revokedAt: null },
          after: { revokedAt: after?.revokedAt ?? null },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
