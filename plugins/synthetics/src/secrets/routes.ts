import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { membershipOf } from '@svc/auth'
import { ConflictError, NotFoundError, Timestamp } from '@svc/http'
import { deleteSecret, listSecrets, putSecret } from '../queries/secrets.js'
import { MANAGED_BASE, OrgParams, SecretParams, tags } from '../schemas.js'
import { auditEntry } from '../checks/access.js'
import { SecretsKeyMissing, type SecretSealer } from '@svc/config'

const SecretName = Type.String({
  pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
  description: 'Referred to as {{secret:NAME}} in a check’s URL, headers or body, and as secrets.NAME in a browser check’s script',
})
const Secret = Type.Object(
  { name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp },
  { title: 'SyntheticSecret', description: 'A secret’s value is never returned' },
)

/**
 * Secrets of an organization's checks (synthetics manager to read the names and to change them):
 * sealed with SYNTHETICS_SECRETS_KEY; without the key they cannot be stored (409 says so).
 */
export const secretRoutes: FastifyPluginAsyncTypebox<{ sealer: SecretSealer }> = async (app, options) => {
  const db = app.database.db
  const manager = app.requireProductRole('synthetics', 'manager')
  const body = (row: { name: string; createdAt: Date; updatedAt: Date }) => ({
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  })

  app.get(
    `${MANAGED_BASE}/secrets`,
    {
      schema: {
        tags,
        summary: 'Secret names, never values (synthetics manager)',
        params: OrgParams,
        response: { 200: Type.Object({ data: Type.Array(Secret) }) },
      },
      onRequest: manager,
    },
    async (request) => ({ data: (await listSecrets(db, membershipOf(request).organizationId)).map(body) }),
  )

  app.put(
    `${MANAGED_BASE}/secrets/:name`,
    {
      schema: {
        tags,
        summary: 'Create or replace a secret (synthetics manager)',
        params: Type.Object({ orgId: Type.String(), name: SecretName }),
        body: Type.Object({ value: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
        response: { 200: Secret, 201: Secret },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      let sealed: Buffer
      try {
        sealed = options.sealer.seal(organizationId, request.params.name, request.body.value)
      } catch (error) {
        if (error instanceof SecretsKeyMissing) throw new ConflictError(error.message)
        throw error
      }
      const row = await db.transaction().execute(async (trx) => {
        const row = await putSecret(trx, organizationId, request.params.name, sealed, request.user.userId)
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'secret', row.id),
          action: row.created ? 'secret.created' : 'secret.replaced',
          after: { name: row.name },
        })
        return row
      })
      return reply.code(row.created ? 201 : 200).send(body(row))
    },
  )

  app.delete(
    `${MANAGED_BASE}/secrets/:name`,
    {
      schema: {
        tags,
        summary: 'Delete a secret (synthetics manager); checks using it fail until changed',
        params: SecretParams,
        response: { 204: Type.Null() },
      },
      onRequest: manager,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        if (!(await deleteSecret(trx, organizationId, request.params.name))) throw new NotFoundError('secret')
        await recordAudit(trx, auditContextOf(request), {
          ...auditEntry(organizationId, 'secret', request.params.name),
          action: 'secret.deleted',
          before: { name: request.params.name },
        })
      })
      return reply.code(204).send(null)
    },
  )
}
