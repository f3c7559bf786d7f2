import type { Executor } from '@svc/db'
import { auditCountsBetween, auditEntriesBetween } from '../../queries/audit-logs.js'
import { MAX_ROWS, dailySeries, type ReportContent } from '../model.js'

/** The audit log export: every entry of the period, oldest first, with who acted and what changed. */
export async function auditLogReport(db: Executor, organizationId: string, from: Date, to: Date): Promise<ReportContent> {
  const [entries, counts] = await Promise.all([
    auditEntriesBetween(db, organizationId, from, to, MAX_ROWS),
    auditCountsBetween(db, organizationId, from, to),
  ])
  const total = counts.perDay.reduce((sum, day) => sum + day.entries, 0)
  const actors = new Set(entries.map((entry) => entry.actorUserId ?? entry.actorTokenId ?? entry.actorType))
  return {
    title: 'Audit log',
    from,
    to,
    summary: [
      { label: 'Entries', value: String(total) },
      { label: 'Distinct actors', value: String(actors.size) },
      { label: 'Products', value: [...new Set(counts.byAction.map((row) => row.product))].join(', ') || 'none' },
    ],
    chart: {
      title: 'Audit entries per day',
      unit: 'entries',
      points: dailySeries(from, to, new Map(counts.perDay.map((row) => [row.day, row.entries]))),
    },
    tables: [
      {
        title: 'Entries by product and action',
        columns: ['Product', 'Action', 'Entries'],
        rows: counts.byAction.map((row) => [row.product, row.action, row.entries]),
      },
      {
        title: 'Entries',
        columns: ['Time (UTC)', 'Actor', 'Action', 'Entity'],
        rows: entries.map((entry) => [
          entry.createdAt.toISOString().slice(0, 19).replace('T', ' '),
          entry.actorEmail ?? (entry.actorTokenId ? `SCIM token ${entry.actorTokenId}` : entry.actorType),
          `${entry.product}: ${entry.action}`,
          entry.entityId ? `${entry.entityType} ${entry.entityId}` : entry.entityType,
        ]),
      },
    ],
    detail: {
      title: 'Entries',
      columns: [
        'time',
        'actor_type',
        'actor_user_id',
        'actor_email',
        'impersonated_by',
        'scim_token_id',
        'product',
        'entity_type',
        'entity_id',
        'action',
        'changes',
        'ip',
        'request_id',
      ],
      rows: entries.map((entry) => [
        entry.createdAt.toISOString(),
        entry.actorType,
        entry.actorUserId,
        entry.actorEmail,
        entry.actorOriginalUserId,
        entry.actorTokenId,
        entry.product,
        entry.entityType,
        entry.entityId,
        entry.action,
        JSON.stringify(entry.changes),
        entry.ip,
        entry.requestId,
      ]),
    },
    notes: [
      ...(total === 0 ? ['No audit entries were recorded in this period.'] : []),
      ...(total > entries.length
        ? [`Only the first ${entries.length} of ${total} entries are listed: narrow the period for the rest.`]
        : []),
    ],
  }
}
