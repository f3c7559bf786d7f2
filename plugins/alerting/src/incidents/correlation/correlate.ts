import { recordAudit } from '@svc/audit'
import { lockUntilCommit, type Executor } from '@svc/db'
import { publish } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { URGENT_PRIORITIES } from '../../alerts/index.js'
import { dependencyNameEdges } from '../../oncall/index.js'
import { severitiesOf, severityForPriority } from '../shaping/severities.js'
import { addTimeline, findIncident, insertIncident, linkAlerts, updateIncident, type AlertLink } from '../queries.js'
import { bestMatch, newAlertsOf, ruleSetOf, servicesOnlyIn, type Edge, type NewAlert, type NewAlertRow } from './queries.js'
import { RULE_WEIGHTS, scoreOf, type CorrelationRule } from './rules.js'

export type Correlation = { incidentId: string; action: 'joined' | 'reopened' | 'opened' }

const system = { actor: { type: 'system' as const } }

/**
 * What one dispatcher transaction correlates: each organization is locked (to commit: two
 * replicas never open two incidents for one storm), its rules and its new alerts read once; the
 * alerts that join open incidents are linked, written on the incidents' timelines and audited
 * together when the batch ends (`flush`), one timeline and one audit entry per incident rather
 * than per alert of a storm. Alerts of one batch (at most a hundred, about a second) therefore
 * match the links made before it and the incidents opened or reopened in it.
 */
export class CorrelationBatch {
  private readonly rules = new Map<string, CorrelationRule[]>()
  private readonly edges = new Map<string, Edge[]>()
  private readonly alerts = new Map<string, NewAlertRow>()
  private readonly joined = new Map<string, { organizationId: string; links: AlertLink[] }>()

  /** Locks the organization and reads its rules (by weight) and the batch's new alerts of it. */
  async prepare(trx: Executor, organizationId: string, alertIds: string[]): Promise<void> {
    if (!this.rules.has(organizationId)) {
      await lockUntilCommit(trx, `correlation:${organizationId}`)
      const { rules } = await ruleSetOf(trx, organizationId)
      this.edges.set(organizationId, await dependencyNameEdges(trx, organizationId))
      this.rules.set(
        organizationId,
        [...rules].sort((a, b) => RULE_WEIGHTS[b.kind] - RULE_WEIGHTS[a.kind]),
      )
    }
    for (const alert of await newAlertsOf(trx, organizationId, alertIds)) this.alerts.set(alert.id, alert)
  }

  rulesOf(organizationId: string): CorrelationRule[] {
    return this.rules.get(organizationId) ?? []
  }

  edgesOf(organizationId: string): Edge[] {
    return this.edges.get(organizationId) ?? []
  }

  alertOf(alertId: string): NewAlertRow | undefined {
    return this.alerts.get(alertId)
  }

  noteJoined(organizationId: string, incidentId: string, link: AlertLink) {
    const entry = this.joined.get(incidentId) ?? { organizationId, links: [] }
    entry.links.push(link)
    this.joined.set(incidentId, entry)
  }

  /** Links the alerts that joined, with one `alerts_linked` timeline entry and one `incident.alerts_correlated` audit entry per incident. */
  async flush(trx: Executor, jobs: JobQueue): Promise<void> {
    // In one order (by id) across replicas: each incident's row is locked as its timeline moves updated_at.
    const joined = [...this.joined].sort(([a], [b]) => a.localeCompare(b))
    for (const [incidentId, { organizationId, links }] of joined) {
      const alertIds = await linkAlerts(trx, organizationId, incidentId, links)
      const placed = links.filter((link) => alertIds.includes(link.alertId))
      if (placed.length === 0) continue
      const rules: Record<string, number> = {}
      for (const link of placed) rules[link.rule] = (rules[link.rule] ?? 0) + 1
      await addTimeline(trx, [{ organizationId, incidentId, kind: 'alerts_linked', body: null, data: { alertIds, rules }, authorId: null }])
      await recordAudit(trx, system, {
        organizationId,
        product: 'alerting',
        entityType: 'incident',
        entityId: incidentId,
        action: 'incident.alerts_correlated',
        after: { alerts: placed.map(({ alertId, rule, score }) => ({ alertId, rule, score })) },
      })
      // Services only the alerts just placed bring: the incident's investigation should see them.
      const services = await servicesOnlyIn(trx, organizationId, incidentId, alertIds)
      if (services.length > 0)
        await publish(jobs, trx, 'incident.changed', { organizationId, incidentId, reason: 'services_joined', services })
    }
    this.joined.clear()
  }
}

/**
 * Puts a new alert where it belongs (decision 0019, "Correlation"), in the event dispatcher's
 * transaction for the alert's `created` event, so each alert is correlated once:
 *
 * 1. an alert with the fingerprint of an alert of an incident resolved in the last 30 minutes
 *    reopens that incident;
 * 2. otherwise the organization's rules, by weight, put it in the open incident of the best match;
 * 3. otherwise a P1 or P2 alert opens an incident of its own; a lower one stays in none.
 *
 * The batch must have been prepared for the alert's organization. A joining alert costs one
 * statement of its own (the best match of all rules); its link is written with the batch's.
 */
export async function correlateAlert(batch: CorrelationBatch, trx: Executor, alertId: string): Promise<Correlation | undefined> {
  const alert = batch.alertOf(alertId)
  if (!alert || alert.incidentId) return undefined
  if (alert.reopens) {
    await reopen(trx, alert, alert.reopens)
    return { incidentId: alert.reopens.incidentId, action: 'reopened' }
  }
  const match = await bestMatch(trx, batch.rulesOf(alert.organizationId), batch.edgesOf(alert.organizationId), alert)
  if (match) {
    const score = scoreOf(match.rule.kind, match.gapSeconds, windowOf(match.rule))
    const matched = { ...match.matched, alertId: match.alertId }
    batch.noteJoined(alert.organizationId, match.incidentId, { alertId, rule: match.rule.kind, score, matched, linkedBy: null })
    return { incidentId: match.incidentId, action: 'joined' }
  }
  if (URGENT_PRIORITIES.has(alert.priority)) return { incidentId: await open(trx, alert), action: 'opened' }
  return undefined
}

const windowOf = (rule: CorrelationRule) => ('windowMinutes' in rule ? rule.windowMinutes : undefined)

type Alert = NewAlert & { priority: string; title: string }

async function reopen(trx: Executor, alert: Alert, resolved: { incidentId: string; alertId: string }) {
  const incident = await findIncident(trx, alert.organizationId, resolved.incidentId, true)
  if (!incident) return
  // Another alert of the same batch may have reopened it already: then this one only joins.
  if (incident.status === 'resolved') await reopenIncident(trx, alert, incident.id)
  const matched = { fingerprint: alert.fingerprint, alertId: resolved.alertId, reopened: true }
  await linkAlerts(trx, alert.organizationId, incident.id, [{ alertId: alert.id, rule: 'fingerprint', score: 1, matched, linkedBy: null }])
  await addTimeline(trx, [
    {
      organizationId: alert.organizationId,
      incidentId: incident.id,
      kind: 'alert_linked',
      body: null,
      data: { alertId: alert.id, rule: 'fingerprint', matched },
      authorId: null,
    },
  ])
}

async function reopenIncident(trx: Executor, alert: Alert, incidentId: string) {
  await updateIncident(trx, alert.organizationId, incidentId, { status: 'investigating', resolvedAt: null })
  await addTimeline(trx, [
    {
      organizationId: alert.organizationId,
      incidentId: incidentId,
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
    entityId: incidentId,
    action: 'incident.reopened',
    before: { status: 'resolved' },
    after: { status: 'investigating', alertId: alert.id },
  })
}

async function open(trx: Executor, alert: Alert): Promise<string> {
  const { organizationId } = alert
  const severity = severityForPriority(await severitiesOf(trx, organizationId), alert.priority).key
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
