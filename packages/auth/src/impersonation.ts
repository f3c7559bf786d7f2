import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import { auditContextOf, recordAudit } from '@svc/audit'
import type { DB } from '@svc/db'

/**
 * The audit entry that opens an impersonation session: the first request a platform admin's
 * token makes as one user writes `user.impersonation_started` (both identities, the address,
 * the user agent); every later request of it is logged, not audited again. "First" is per
 * process: each replica that serves the session writes its own opening entry.
 */
export function createImpersonationLog(db: Kysely<DB>) {
  const started = new LRUCache<string, true>({ max: 10_000, ttl: 60 * 60 * 1000 })
  return {
    async recordStart(request: FastifyRequest, adminToken: string): Promise<void> {
      const key = `${adminToken}\u0000${request.user.userId}`
      if (started.has(key)) return
      started.set(key, true)
      await recordAudit(db, auditContextOf(request), {
        organizationId: null,
        product: 'platform',
        entityType: 'user',
        entityId: request.user.userId,
        action: 'user.impersonation_started',
        after: { originalUserId: request.user.originalUserId, originalEmail: request.user.originalEmail },
      })
    },
  }
}
