import { recordAudit } from '@svc/audit'
import type { Executor } from '@svc/db'
import { OPENING_PRIORITIES, severityOfPriority } from './model.js'
import { addTimeline, alertsWithIncident, insertIncident, linkAlerts } from './queries.js'

/**
 * A P1 or P2 alert in no incident opens one (decision 0019): run by the event dispatcher for the
 * alert's `created` event, in the transaction that marks the event dispatched, so each alert
 * opens at most one incident however often the event is claimed. Answers the incident's id.
 */
export async function openIncidentForAlert(trx: Executor, organizationId: string, alertId: string): Promise<string | undefined> {
  const [alert] = await alertsWithIncident(trx, organizationId, [alertId])
  if (!alert || alert.incidentId || !OPENING_PRIORITIES.has(alert.priority)) return undefined
  const severity = severityOfPriority(alert.priority)
  const incidentId = await insertIncident(trx, {
    organizationId,
    title: alert.title,
    summary: null,
    severity,
    openedBy: 'alert',
    declaredBy: null,
    startedAt: alert.firstSeenAt,
    detectedAt: alert.firstSeenAt,
  })
  const matched = { priority: alert.priority }
  await linkAlerts(trx, organizationId, incidentId, [{ alertId, rule: 'priority', score: 1, matched, linkedBy: null }])
  await addTimeline(trx, [
    { organizationId, incidentId, kind: 'opened', body: null, data: { alertId, ...matched, severity }, authorId: null },
  ])
  await recordAudit(
    trx,
    { actor: { type: 'system' } },
    {
      organizationId,
      product: 'alerting',
      entityType: 'incident',
      entityId: incidentId,
      action: 'incident.opened',
      after: { title: alert.title, severity, alertId, rule: 'priority' },
    },
  )
  return incidentId
}
