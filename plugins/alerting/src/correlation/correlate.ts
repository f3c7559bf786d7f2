import { recordAudit } from '@svc/audit'
import { lockUntilCommit, type Executor } from '@svc/db'
import { OPENING_PRIORITIES, severityOfPriority } from '../incidents/model.js'
import { addTimeline, findIncident, insertIncident, linkAlerts, updateIncident } from '../incidents/queries.js'
import { matchRule, newAlertOf, recentlyResolvedWith, ruleSetOf, type NewAlert } from './queries.js'
import { RULE_WEIGHTS, scoreOf, type CorrelationRule } from './rules.js'

export type Correlation = { incidentId: string; action: 'joined' | 'reopened' | 'opened' }

const system = { actor: { type: 'system' as const } }

/**
 * Puts a new alert where it belongs (decision 0019, "Correlation"), in the event dispatcher's
 * transaction for the alert's `created` event, so each alert is correlated once:
 *
 * 1. an alert with the fingerprint of an alert of an incident resolved in the last 30 minutes
 *    reopens that incident;
 * 2. otherwise the organization's rules, by weight, put it in the open incident of the best match;
 * 3. otherwise a P1 or P2 alert opens an incident of its own; a lower one stays in none.
 *
 * Correlation is serialised per organization (an advisory lock to commit), so two replicas
 * never open two incidents for two alerts of one storm.
 */
export async function correlateAlert(
  trx: Executor,
  organizationId: string,
  alertId: string,
  /** Rule sets already read in this transaction (a dispatcher batch), by organization. */
  ruleSets = new Map<string, CorrelationRule[]>(),
): Promise<Correlation | undefined> {
  await lockUntilCommit(trx, `correlation:${organizationId}`)
  const alert = await newAlertOf(trx, organizationId, alertId)
  if (!alert || alert.incidentId) return undefined

  const resolved = await recentlyResolvedWith(trx, alert)
  if (resolved) {
    await reopen(trx, alert, resolved)
    return { incidentId: resolved.incidentId, action: 'reopened' }
  }
  let byWeight = ruleSets.get(organizationId)
  if (!byWeight) {
    const { rules } = await ruleSetOf(trx, organizationId)
    byWeight = [...rules].sort((a, b) => RULE_WEIGHTS[b.kind] - RULE_WEIGHTS[a.kind])
    ruleSets.set(organizationId, byWeight)
  }
  for (const rule of byWeight) {
    const match = await matchRule(trx, rule, alert)
    if (!match) continue
    const score = scoreOf(rule.kind, match.gapSeconds, windowOf(rule))
    await join(trx, alert, match.incidentId, rule.kind, score, { ...match.matched, alertId: match.alertId })
    return { incidentId: match.incidentId, action: 'joined' }
  }
  if (OPENING_PRIORITIES.has(alert.priority)) return { incidentId: await open(trx, alert), action: 'opened' }
  return undefined
}

const windowOf = (rule: CorrelationRule) => ('windowMinutes' in rule ? rule.windowMinutes : undefined)

type Alert = NewAlert & { priority: string; title: string }

async function join(trx: Executor, alert: Alert, incidentId: string, rule: string, score: number, matched: Record<string, unknown>) {
  await linkAlerts(trx, alert.organizationId, incidentId, [{ alertId: alert.id, rule, score, matched, linkedBy: null }])
  await addTimeline(trx, [
    {
      organizationId: alert.organizationId,
      incidentId,
      kind: 'alert_linked',
      body: null,
      data: { alertId: alert.id, rule, score, matched },
      authorId: null,
    },
  ])
  await recordAudit(trx, system, {
    organizationId: alert.organizationId,
    product: 'alerting',
    entityType: 'incident',
    entityId: incidentId,
    action: 'incident.alert_correlated',
    after: { alertId: alert.id, rule, score, matched },
  })
}

async function reopen(trx: Executor, alert: Alert, resolved: { incidentId: string; alertId: string }) {
  const incident = await findIncident(trx, alert.organizationId, resolved.incidentId, true)
  if (!incident) return
  await updateIncident(trx, alert.organizationId, incident.id, { status: 'investigating', resolvedAt: null })
  await addTimeline(trx, [
    {
      organizationId: alert.organizationId,
      incidentId: incident.id,
      kind: 'status_changed',
      body: null,
      data: { from: 'resolved', to: 'investigating', reopenedBy: alert.id },
      authorId: null,
    },
  ])
  await recordAudit(trx, system, {
    organizationId: alert.organizationId,
    product: 'alerting',
    entityType: 'incident',
    entityId: incident.id,
    action: 'incident.reopened',
    before: { status: 'resolved' },
    after: { status: 'investigating', alertId: alert.id },
  })
  await join(trx, alert, incident.id, 'fingerprint', 1, { fingerprint: alert.fingerprint, alertId: resolved.alertId, reopened: true })
}

async function open(trx: Executor, alert: Alert): Promise<string> {
  const { organizationId } = alert
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
  await linkAlerts(trx, organizationId, incidentId, [{ alertId: alert.id, rule: 'priority', score: 1, matched, linkedBy: null }])
  await addTimeline(trx, [
    { organizationId, incidentId, kind: 'opened', body: null, data: { alertId: alert.id, ...matched, severity }, authorId: null },
  ])
  await recordAudit(trx, system, {
    organizationId,
    product: 'alerting',
    entityType: 'incident',
    entityId: incidentId,
    action: 'incident.opened',
    after: { title: alert.title, severity, alertId: alert.id, rule: 'priority' },
  })
  return incidentId
}
