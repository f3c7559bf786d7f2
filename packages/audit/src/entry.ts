import type { FastifyRequest } from 'fastify'

export const auditProducts = ['platform', 'statuspages', 'alerting', 'synthetics', 'insights'] as const
export type AuditProduct = (typeof auditProducts)[number]

/**
 * Who acted: a signed-in user (possibly impersonated by an admin), a SCIM token, an organization
 * API token (for the person who created it), or the system.
 */
export type AuditActor =
  | { type: 'user'; userId: string; originalUserId?: string }
  | { type: 'scim_token'; tokenId: string }
  | { type: 'api_token'; tokenId: string; userId: string }
  | { type: 'system' }

/** Where the change came from. */
export interface AuditContext {
  actor: AuditActor
  requestId?: string
  ip?: string
  userAgent?: string
}

export type Fields = Record<string, unknown>

/** One change to one entity. `before` is absent for a creation, `after` for a deletion. */
export interface AuditChange {
  organizationId: string | null
  product: AuditProduct
  entityType: string
  entityId: string | null
  action: string
  before?: Fields | null
  after?: Fields | null
}

/** The acting user of an authenticated request, as the audit log records it. */
export function auditContextOf(
  // `user` as the auth package sets it; named here because auth builds on this package.
  request: Pick<FastifyRequest, 'headers' | 'id' | 'ip'> & {
    user?: { userId: string; originalUserId?: string | null } | null
    apiToken?: { tokenId: string } | null
  },
): AuditContext {
  const { user, apiToken } = request
  const userAgent = request.headers['user-agent']
  return {
    actor:
      user && apiToken
        ? { type: 'api_token', tokenId: apiToken.tokenId, userId: user.userId }
        : user
          ? { type: 'user', userId: user.userId, ...(user.originalUserId ? { originalUserId: user.originalUserId } : {}) }
          : { type: 'system' },
    requestId: request.id,
    ip: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : undefined,
  }
}
