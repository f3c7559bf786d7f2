import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import { hashSecret } from './secret-hash.js'

/** Every SCIM token starts with this, so a leaked one is recognisable (secret scanners). */
export const SCIM_TOKEN_PREFIX = 'scim_'
/** Where SCIM lives; a SCIM token authenticates nothing else. */
export const SCIM_BASE_PATH = '/api/v1/scim/v2'
const DISPLAYED_CHARACTERS = 12
const LAST_USED_RESOLUTION_MS = 60_000

export function hashScimToken(token: string): string {
  return hashSecret(token)
}

/** A new token: the plaintext (shown once), the prefix kept for display, and the stored hash. */
export function generateScimToken(): { token: string; prefix: string; hash: string } {
  const token = `${SCIM_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, prefix: token.slice(0, DISPLAYED_CHARACTERS), hash: hashScimToken(token) }
}

export interface ScimPrincipal {
  tokenId: string
  organizationId: string
  /** The organization role its creator holds now: only an owner's token may change an owner. */
  creatorRole: 'admin' | 'owner'
}

/**
 * The token with this plaintext while it may act, or undefined: not revoked, not past its
 * `expires_at`, and its creator still an active admin or owner of its organization (a token
 * outlives neither its creator's membership nor their admin role). `last_used_at` is refreshed
 * at most once a minute per token, so a provisioning burst does not turn every read into a write.
 */
export async function authenticateScimToken(db: Kysely<DB>, token: string): Promise<ScimPrincipal | undefined> {
  const row = await db
    .selectFrom('core.scimTokens as t')
    .innerJoin('core.organizationMembers as creator', (join) =>
      join.onRef('creator.organizationId', '=', 't.organizationId').onRef('creator.userId', '=', 't.createdBy'),
    )
    .select(['t.id', 't.organizationId', 't.lastUsedAt', 'creator.role as creatorRole'])
    .where('t.tokenHash', '=', hashScimToken(token))
    .where('t.revokedAt', 'is', null)
    .where((eb) => eb.or([eb('t.expiresAt', 'is', null), eb('t.expiresAt', '>', sql<Date>`now()`)]))
    .where('creator.suspendedAt', 'is', null)
    .where('creator.role', 'in', ['admin', 'owner'])
    .executeTakeFirst()
  if (!row) return undefined
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db
      .updateTable('core.scimTokens')
      .set({ lastUsedAt: sql<Date>`now()` })
      .where('id', '=', row.id)
      .execute()
  }
  return { tokenId: row.id, organizationId: row.organizationId, creatorRole: row.creatorRole === 'owner' ? 'owner' : 'admin' }
}
