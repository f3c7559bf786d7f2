import type { FastifyRequest } from 'fastify'
import { recordAudit, type AuditContext, type Fields } from '@svc/audit'
import type { ScimPrincipal } from '@svc/auth'
import type { Executor } from '@svc/db'

/** The SCIM token the SCIM rule resolved; every SCIM route has that rule. */
export function principalOf(request: FastifyRequest): ScimPrincipal {
  if (!request.scim) throw new Error(`${request.method} ${request.url}: the SCIM token rule did not run`)
  return request.scim
}

function contextOf(request: FastifyRequest): AuditContext {
  const userAgent = request.headers['user-agent']
  return {
    actor: { type: 'scim_token', tokenId: principalOf(request).tokenId },
    requestId: request.id,
    ip: request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : undefined,
  }
}

/** Records a SCIM change in the audit log, in the change's own transaction; the actor is the token. */
export async function auditScimChange(
  trx: Executor,
  request: FastifyRequest,
  change: { entityType: 'scim_user' | 'scim_group'; entityId: string; action: string; before?: Fields; after?: Fields },
): Promise<void> {
  await recordAudit(trx, contextOf(request), { organizationId: principalOf(request).organizationId, product: 'platform', ...change })
}
