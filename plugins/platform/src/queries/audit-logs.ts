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
