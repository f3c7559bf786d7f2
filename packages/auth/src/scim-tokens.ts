import { createHash, randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'

/** Every SCIM token starts with this, so a leaked one is recognisable (secret scanners). */
export const SCIM_TOKEN_PREFIX = 'scim_'
/** Where SCIM lives; a SCIM token authenticates nothing else. */
export const SCIM_BASE_PATH = '/api/v1/scim/v2'
const DISPLAYED_CHARACTERS = 12
const LAST_USED_RESOLUTION_MS = 60_000

export function hashScimToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** A new token: the plaintext (shown once), the prefix kept for display, and the stored hash. */
export function generateScimToken(): { token: string; prefix: string; hash: string } {
  const token = `${SCIM_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, prefix: token.slice(0, DISPLAYED_CHARACTERS), hash: hashScimToken(token) }
}

export interface ScimPrincipal {
  tokenId: string
  organizationId: string
}

/**
 * The unrevoked token with this plaintext, or undefined. `last_used_at` is refreshed at most
 * once a minute per token, so a provisioning burst does not turn every read into a write.
 */
export async function authenticateScimToken(db: Kysely<DB>, token: string): Promise<ScimPrincipal | undefined> {
  const row = await db
    .selectFrom('core.scimTokens')
    .select(['id', 'organizationId', 'lastUsedAt'])
    .where('tokenHash', '=', hashScimToken(token))
    .where('revokedAt', 'is', null)
    .executeTakeFirst()
  if (!row) return undefined
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.updateTable('core.scimTokens').set({ lastUsedAt: sql<Date>`now()` }).where('id', '=', row.id).execute()
  }
  return { tokenId: row.id, organizationId: row.organizationId }
}
