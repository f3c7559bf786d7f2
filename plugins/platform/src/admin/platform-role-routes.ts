import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import type { PlatformRole } from '@svc/auth'
import { NotFoundError } from '@svc/http'
import { PlatformRoleOrNone } from '@svc/profile'

/**
 * Platform roles live on the user row (`core.users.platform_role`) and only platform
 * admins (the PlatformAdmins group) set them.
 */
export const platformRoleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/api/v1/admin/users/:userId/platform-role',
    {
      schema: {
        tags: ['admin'],
        summary: 'Set a user’s platform role (platform admin)',
        params: Type.Object({ userId: Type.String({ format: 'uuid' }) }),
        body: Type.Object({ platformRole: PlatformRoleOrNone }, { additionalProperties: false }),
        response: { 200: Type.Object({ userId: Type.String({ format: 'uuid' }), email: Type.String(), platformRole: PlatformRoleOrNone }) },
      },
      onRequest: app.requirePlatformAdmin,
    },
    async (request) => {
      const { userId } = request.params
      const updated = await app.database.db.transaction().execute(async (trx) => {
        const before = await trx.selectFrom('core.users').select(['platformRole']).where('id', '=', userId).forUpdate().executeTakeFirst()
        if (!before) throw new NotFoundError('user')
        const after = await trx
          .updateTable('core.users')
          .set({ platformRole: request.body.platformRole, updatedAt: sql<Date>`now()` })
          .where('id', '=', userId)
          .returning(['id', 'email', 'platformRole'])
          .executeTakeFirstOrThrow()
        await recordAudit(trx, auditContextOf(request), {
          organizationId: null,
          product: 'platform',
          entityType: 'user',
          entityId: userId,
          action: 'user.platform_role_changed',
          before: { platformRole: before.platformRole },
          after: { platformRole: after.platformRole },
        })
        return after
      })
      app.sessions.forget(userId)
      return { userId: updated.id, email: updated.email, platformRole: updated.platformRole as PlatformRole | null }
    },
  )
}
