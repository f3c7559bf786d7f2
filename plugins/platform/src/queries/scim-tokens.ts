import { sql } from 'kysely'
import type { Executor } from '@svc/db'

const listed = ['id', 'name', 'tokenPrefix', 'createdBy', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt'] as const

export async function listScimTokens(db: Executor, organizationId: string) {
  return db
    .selectFrom('core.scimTokens')
    .select(listed)
    .where('organizationId', '=', organizationId)
    .orderBy('createdAt', 'desc')
    .orderBy('id')
    .execute()
}

export async function insertScimToken(
  db: Executor,
  values: { organizationId: string; name: string; tokenPrefix: string; tokenHash: string; createdBy: string; expiresAt: Date | null },
) {
  return db.insertInto('core.scimTokens').values(values).returning(listed).executeTakeFirstOrThrow()
}

export async function findScimToken(db: Executor, organizationId: string, tokenId: string) {
  return db
    .selectFrom('core.scimTokens')
    .select(listed)
    .where('organizationId', '=', organizationId)
    .where('id', '=', tokenId)
    .executeTakeFirst()
}

/** Sets `revoked_at` once; revoking a revoked token keeps the first time. */
export async function revokeScimToken(db: Executor, organizationId: string, tokenId: string) {
  return db
    .updateTable('core.scimTokens')
    .set({ revokedAt: sql<Date>`coalesce(revoked_at, now())` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', tokenId)
    .returning(listed)
    .executeTakeFirst()
}
