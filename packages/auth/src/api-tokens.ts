import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import type { Account } from './identity.js'
import type { HeldProductRoles, Membership } from './membership.js'
import { isProduct, isProductRole, productRoleAtLeast, products, type Product, type ProductRole } from './roles.js'
import { hashSecret } from './secret-hash.js'

// Organization API tokens (decision 0030): what CI and configuration as code use where a person's
// one-hour ID token cannot go. A token acts on the routes of its one organization, as its creator
// would with the product roles the token names, each capped by what the creator holds at the time
// of the request, and with the organization role `member`: members, billing, SSO and tokens stay
// with people. It never acts on personal or platform-admin routes.

/** Every API token starts with this, so a leaked one is recognisable (secret scanners). */
export const API_TOKEN_PREFIX = 'dvx_'
const DISPLAYED_CHARACTERS = 12
const LAST_USED_RESOLUTION_MS = 60_000

/** A new token: the plaintext (shown once), the prefix kept for display, and the stored hash. */
export function generateApiToken(): { token: string; prefix: string; hash: string } {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, prefix: token.slice(0, DISPLAYED_CHARACTERS), hash: hashSecret(token) }
}

export const isApiToken = (credential: string) => credential.startsWith(API_TOKEN_PREFIX)

export interface ApiTokenPrincipal {
  tokenId: string
  organizationId: string
  /** The roles the token was given; what it holds is these capped by its creator's (`tokenProductRoles`). */
  productRoles: HeldProductRoles
  /** The person it acts for: its creator, an active member of its organization. */
  creator: Account
}

/**
 * The token with this plaintext while it may act, or undefined: not revoked, not past its
 * `expires_at`, and its creator still an active member of its organization (a token does not
 * outlive its creator's membership). `last_used_at` is refreshed at most once a minute per token.
 */
export async function authenticateApiToken(db: Kysely<DB>, token: string): Promise<ApiTokenPrincipal | undefined> {
  const row = await db
    .selectFrom('core.apiTokens as t')
    .innerJoin('core.organizationMembers as creator', (join) =>
      join.onRef('creator.organizationId', '=', 't.organizationId').onRef('creator.userId', '=', 't.createdBy'),
    )
    // The creator's account in the same statement: a token's request reads it every time.
    .innerJoin('core.users as u', 'u.id', 'creator.userId')
    .select(['t.id', 't.organizationId', 't.productRoles', 't.lastUsedAt'])
    .select(['u.id as userId', 'u.email', 'u.displayName', 'u.name', 'u.givenName', 'u.familyName', 'u.timeZone', 'u.isEmployee'])
    .where('t.tokenHash', '=', hashSecret(token))
    .where('t.revokedAt', 'is', null)
    .where((eb) => eb.or([eb('t.expiresAt', 'is', null), eb('t.expiresAt', '>', sql<Date>`now()`)]))
    .where('creator.suspendedAt', 'is', null)
    .where('creator.joinedAt', 'is not', null)
    .executeTakeFirst()
  if (!row) return undefined
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db
      .updateTable('core.apiTokens')
      .set({ lastUsedAt: sql<Date>`now()` })
      .where('id', '=', row.id)
      .execute()
  }
  return {
    tokenId: row.id,
    organizationId: row.organizationId,
    productRoles: productRolesOf(row.productRoles),
    // A platform role is a person's, never a token's: it is not even read.
    creator: {
      id: row.userId,
      email: row.email,
      displayName: row.displayName,
      name: row.name,
      givenName: row.givenName,
      familyName: row.familyName,
      timeZone: row.timeZone,
      isEmployee: row.isEmployee,
      platformRole: null,
    },
  }
}

/** The product roles a token row names, the unknown ones dropped. */
export function productRolesOf(stored: unknown): HeldProductRoles {
  const roles = new Map<Product, ProductRole>()
  if (stored && typeof stored === 'object')
    for (const [product, role] of Object.entries(stored))
      if (isProduct(product) && typeof role === 'string' && isProductRole(role)) roles.set(product, role)
  return roles
}

/**
 * What a token holds in each product: the lower of what it was given and what its creator holds
 * now (an owner holds every product as admin). A product its creator lost is lost to the token.
 */
export function tokenProductRoles(given: HeldProductRoles, creator: Membership, creatorHeld: HeldProductRoles): HeldProductRoles {
  const held = new Map<Product, ProductRole>()
  for (const product of products) {
    const wanted = given.get(product)
    const ceiling = creator.role === 'owner' ? 'admin' : creatorHeld.get(product)
    if (wanted === undefined || ceiling === undefined) continue
    held.set(product, productRoleAtLeast(ceiling, wanted) ? wanted : ceiling)
  }
  return held
}
