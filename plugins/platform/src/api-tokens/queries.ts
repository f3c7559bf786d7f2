import { sql } from 'kysely'
import type { Executor } from '@svc/db'

const listed = ['id', 'name', 'tokenPrefix', 'productRoles', 'createdBy', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt'] as const

export async function listApiTokens(db: Executor, organizationId: string) {
  return db
    .selectFrom('core.apiTokens')
    .select(listed)
    .where('organizationId', '=', organizationId)
    .orderBy('createdAt', 'desc')
    .orderBy('id')
    .execute()
}

export type ApiTokenRow = Awaited<ReturnType<typeof listApiTokens>>[number]

export async function insertApiToken(
  db: Executor,
  values: {
    organizationId: string
    name: string
    tokenPrefix: string
    tokenHash: string
    productRoles: Record<string, string>
    createdBy: string
    expiresAt: Date | null
  },
) {
  return db.insertInto('core.apiTokens').values(values).returning(listed).executeTakeFirstOrThrow()
}

export async function findApiToken(db: Executor, organizationId: string, tokenId: string) {
  return db
    .selectFrom('core.apiTokens')
    .select(listed)
    .where('organizationId', '=', organizationId)
    .where('id', '=', tokenId)
    .executeTakeFirst()
}

/** Sets `revoked_at` once; revoking a revoked token keeps the first time. */
export async function revokeApiToken(db: Executor, organizationId: string, tokenId: string) {
  return db
    .updateTable('core.apiTokens')
    .set({ revokedAt: sql<Date>`coalesce(revoked_at, now())` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', tokenId)
    .returning(listed)
    .executeTakeFirst()
}
