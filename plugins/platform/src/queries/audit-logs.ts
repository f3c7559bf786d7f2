import { sql } from 'kysely'
import { type Executor, paged } from '@svc/db'

export interface AuditLogFilter {
  product?: string
  entityType?: string
  action?: string
  actorId?: string
  from?: Date
  to?: Date
  offset: number
  limit: number
}

/**
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function listAuditLogs(db: Executor, organizationId: string, filter: AuditLogFilter) {
  let query = db.selectFrom('core.auditLogs').where('organizationId', '=', organizationId)
  if (filter.product) query = query.where('product', '=', filter.product)
  if (filter.entityType) query = query.where('entityType', '=', filter.entityType)
  if (filter.action) query = query.where('action', '=', filter.action)
  if (filter.actorId) query = query.where('actorUserId', '=', filter.actorId)
  if (filter.from) query = query.where('createdAt', '>=', filter.from)
  if (filter.to) query = query.where('createdAt', '<', filter.to)
  return paged(query, (rows) => rows.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc'), filter)
}

/**
 * The organization's audit entries in [from, to) for an export: oldest first, with the actor's e-mail.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function auditEntriesBetween(db: Executor, organizationId: string, from: Date, to: Date, limit: number) {
  return db
    .selectFrom('core.auditLogs as entry')
    .leftJoin('core.users as actor', 'actor.id', 'entry.actorUserId')
    .select([
      'entry.id',
      'entry.createdAt',
      'entry.actorType',
      'entry.actorUserId',
      'actor.email as actorEmail',
      'entry.actorOriginalUserId',
      'entry.actorTokenId',
      'entry.product',
      'entry.entityType',
      'entry.entityId',
      'entry.action',
      'entry.changes',
      'entry.ip',
      'entry.requestId',
    ])
    .where('entry.organizationId', '=', organizationId)
    .where('entry.createdAt', '>=', from)
    .where('entry.createdAt', '<', to)
    .orderBy('entry.createdAt')
    .orderBy('entry.id')
    .limit(limit)
    .execute()
}

/**
 * How many entries the period holds, by UTC day and by product and action.
 *
 * @replica A read that tolerates seconds of replication lag: may go to a read replica (docs/sizing.md).
 */
export async function auditCountsBetween(db: Executor, organizationId: string, from: Date, to: Date) {
  const inPeriod = sql`organization_id = ${organizationId} and created_at >= ${from} and created_at < ${to}`
  const [perDay, byAction] = await Promise.all([
    sql<{ day: string; entries: number }>`
      select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as entries
      from core.audit_logs where ${inPeriod} group by 1 order by 1`.execute(db),
    sql<{ product: string; action: string; entries: number }>`
      select product, action, count(*)::int as entries from core.audit_logs where ${inPeriod}
      group by product, action order by entries desc, product, action`.execute(db),
  ])
  return { perDay: perDay.rows, byAction: byAction.rows }
}
