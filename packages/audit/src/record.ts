import type { Executor, Json } from '@svc/db'
import { changedFields } from './changes.js'
import type { AuditChange, AuditContext } from './entry.js'

/**
 * Writes one audit entry. Call it with the transaction that makes the change, so the change
 * and its entry commit together or not at all.
 */
export async function recordAudit(db: Executor, context: AuditContext, change: AuditChange): Promise<void> {
  await recordAudits(db, context, [change])
}

/** Writes the entries of several changes made by one actor, in one statement (`recordAudit`'s rule holds). */
export async function recordAudits(db: Executor, context: AuditContext, changes: AuditChange[]): Promise<void> {
  if (changes.length === 0) return
  const { actor } = context
  await db
    .insertInto('core.auditLogs')
    .values(
      changes.map((change) => ({
        organizationId: change.organizationId,
        actorType: actor.type,
        actorUserId: actor.type === 'user' || actor.type === 'api_token' ? actor.userId : null,
        actorOriginalUserId: actor.type === 'user' ? (actor.originalUserId ?? null) : null,
        actorTokenId: actor.type === 'scim_token' || actor.type === 'api_token' ? actor.tokenId : null,
        product: change.product,
        entityType: change.entityType,
        entityId: change.entityId,
        action: change.action,
        changes: changedFields(change.before, change.after) as Json,
        requestId: context.requestId ?? null,
        ip: context.ip ?? null,
        userAgent: context.userAgent ?? null,
      })),
    )
    .execute()
}
