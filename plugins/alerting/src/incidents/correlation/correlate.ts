import { recordAudit, recordAudits } from '@svc/audit'
import { lockUntilCommit, type Executor } from '@svc/db'
import { publish } from '@svc/events'
import type { JobQueue } from '@svc/jobs'
import { URGENT_PRIORITIES } from '../../alerts/index.js'
import { dependencyNameEdges } from '../../oncall/index.js'
import { severitiesOf, severityForPriority } from '../shaping/severities.js'
import {
  addTimeline,
  findIncident,
  insertIncident,
  linkAlerts,
  linkAlertsToIncidents,
  lockIncidents,
  updateIncident,
  type AlertLink,
} from '../queries.js'
import {
  bestMatches,
  couldMatch,
  newAlertsOf,
  ruleSetOf,
  servicesNewTo,
  type Edge,
  type Match,
  type NewAlert,
  type NewAlertRow,
} from './queries.js'
import { RULE_WEIGHTS, scoreOf, type CorrelationRule } from './rules.js'

export type Correlation = { incidentId: string; action: 'joined' | 'reopened' | 'opened' }

const system = { actor: { type: 'system' as const } }

/** How many times a batch asks again for its alerts' best matches after incidents it opened; past it, one alert at a time. */
const REMATCHES_PER_BATCH = 8

/**
 * What one dispatcher transaction correlates: each organization is locked (to commit: two
 * replicas never open two incidents for one storm), its rules, its new alerts and their best
 * matches read once; the alerts that join open incidents are linked, written on the incidents'
 * timelines and audited together when the batch ends (`flush`), one timeline and one audit entry
 * per incident rather than per alert of a storm. Alerts of one batch (at most a hundred, about a
 * second) therefore match the links made before it and the incidents opened or reopened in it:
 * an alert that an incident opened in the batch could match (`couldMatch`) is matched again
 * before it is placed, with the others of its kind in one statement.
 */
export class CorrelationBatch {
  private readonly rules = new Map<string, CorrelationRule[]>()
  private readonly edges = new Map<string, Edge[]>()
  private readonly alerts = new Map<string, NewAlertRow>()
  private readonly matches = new Map<string, Match>()
  /** Alerts not yet placed whose match an incident opened or reopened in this batch may change. */
  private readonly stale = new Set<string>()
  private readonly placed = new Set<string>()
  private rematches = 0
  /** The links of alerts that joined incidents open before the batch, by organization: written by `flush`. */
  private readonly joined = new Map<string, Array<AlertLink & { incidentId: string }>>()

  /** Locks the organization and reads its rules (by weight), the batch's new alerts of it and their best matches. */
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
    const alerts = await newAlertsOf(trx, organizationId, alertIds)
    for (const alert of alerts) this.alerts.set(alert.id, alert)
    const unplaced = alerts.filter((alert) => !alert.incidentId && !alert.reopens)
    await this.match(trx, organizationId, unplaced)
  }

  private async match(trx: Executor, organizationId: string, alerts: NewAlert[]) {
    const found = await bestMatches(trx, this.rulesOf(organizationId), this.edgesOf(organizationId), alerts)
    for (const alert of alerts) {
      this.stale.delete(alert.id)
      const match = found.get(alert.id)
      if (match) this.matches.set(alert.id, match)
      else this.matches.delete(alert.id)
    }
  }

  /**
   * The order the batch's alerts are placed in: P1 alerts, then P2, then the rest, each in the
   * order given. A root alert committed just after its symptoms (its write began first) comes in
   * the same batch behind them; placed first, it opens its incident and they join it.
   */
  placingOrder(alertIds: readonly string[]): string[] {
    const rank = (alertId: string) => {
      const priority = this.alerts.get(alertId)?.priority
      return priority !== undefined && URGENT_PRIORITIES.has(priority) ? priority : 'P9'
    }
    // Array.prototype.sort is stable: alerts of one rank keep their order.
    return [...alertIds].sort((a, b) => rank(a).localeCompare(rank(b)))
  }

  /** The alert, as it is correlated now: what the batch opens later no longer changes its match. */
  take(alertId: string): NewAlertRow | undefined {
    this.placed.add(alertId)
    return this.alerts.get(alertId)
  }

  /**
   * The alert's best match as of now. When an incident opened in this batch may have changed it,
   * it is asked again, together with every other such alert (up to REMATCHES_PER_BATCH times a
   * batch, then for this alert alone).
   */
  async matchOf(trx: Executor, alert: NewAlert): Promise<Match | undefined> {
    if (this.stale.has(alert.id)) {
      this.rematches += 1
      const again =
        this.rematches <= REMATCHES_PER_BATCH
          ? [...this.stale].flatMap((id) => {
              const other = this.alerts.get(id)
              return other && other.organizationId === alert.organizationId ? [other] : []
            })
          : [alert]
      await this.match(trx, alert.organizationId, again)
    }
    return this.matches.get(alert.id)
  }

  /** An incident was opened with `alert` as its first, or reopened (`alert` undefined: any alert of it may now match). */
  opened(organizationId: string, alert: NewAlert | undefined) {
    const rules = this.rulesOf(organizationId)
    const edges = this.edgesOf(organizationId)
    for (const other of this.alerts.values())
      if (
        other.organizationId === organizationId &&
        !this.placed.has(other.id) &&
        !other.incidentId &&
        !other.reopens &&
        (!alert || couldMatch(rules, edges, other, alert))
      )
        this.stale.add(other.id)
  }

  private rulesOf(organizationId: string): CorrelationRule[] {
    return this.rules.get(organizationId) ?? []
  }

  private edgesOf(organizationId: string): Edge[] {
    return this.edges.get(organizationId) ?? []
  }

  noteJoined(organizationId: string, incidentId: string, link: AlertLink) {
    const links = this.joined.get(organizationId) ?? []
    links.push({ ...link, incidentId })
    this.joined.set(organizationId, links)
  }

  /**
   * Links the alerts that joined, with one `alerts_linked` timeline entry and one
   * `incident.alerts_correlated` audit entry per incident: a few statements per organization,
   * however many incidents a storm has open.
   */
  async flush(trx: Executor, jobs: JobQueue): Promise<void> {
    for (const [organizationId, links] of this.joined) {
      // Each incident's row is locked as its timeline moves updated_at: all of them first, in one order.
      await lockIncidents(trx, organizationId, [...new Set(links.map((link) => link.incidentId))])
      const linked = await linkAlertsToIncidents(trx, organizationId, links)
      const made = new Set(linked.map((row) => row.alertId))
      const placed = new Map<string, typeof links>()
      for (const link of links) if (made.has(link.alertId)) placed.set(link.incidentId, [...(placed.get(link.incidentId) ?? []), link])
      if (placed.size === 0) continue
      const incidents = [...placed].sort(([a], [b]) => a.localeCompare(b))
      await addTimeline(
        trx,
        incidents.map(([incidentId, incidentLinks]) => {
          const rules: Record<string, number> = {}
          for (const link of incidentLinks) rules[link.rule] = (rules[link.rule] ?? 0) + 1
          const alertIds = incidentLinks.map((link) => link.alertId)
          return { organizationId, incidentId, kind: 'alerts_linked', body: null, data: { alertIds, rules }, authorId: null }
        }),
      )
      await recordAudits(
        trx,
        system,
        incidents.map(([incidentId, incidentLinks]) => ({
          organizationId,
          product: 'alerting',
          entityType: 'incident',
          entityId: incidentId,
          action: 'incident.alerts_correlated',
          after: { alerts: incidentLinks.map(({ alertId, rule, score }) => ({ alertId, rule, score })) },
        })),
      )
      // Services only the alerts just placed bring: the incident's investigation should see them.
      const services = await servicesNewTo(trx, organizationId, [...made])
      for (const [incidentId, joinedServices] of services)
        await publish(jobs, trx, 'incident.changed', { organizationId, incidentId, reason: 'services_joined', services: joinedServices })
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
 * The batch must have been prepared for the alert's organization. A joining alert's link is
 * written with the batch's.
 */
export async function correlateAlert(batch: CorrelationBatch, trx: Executor, alertId: string): Promise<Correlation | undefined> {
  const alert = batch.take(alertId)
  if (!alert || alert.incidentId) return undefined
  if (alert.reopens) {
    const reopened = await reopen(trx, alert, alert.reopens)
    if (reopened) batch.opened(alert.organizationId, reopened === 'reopened' ? undefined : alert)
    return { incidentId: alert.reopens.incidentId, action: 'reopened' }
  }
  const match = await batch.matchOf(trx, alert)
  if (match) {
    const score = scoreOf(match.rule.kind, match.gapSeconds, windowOf(match.rule))
    const matched = { ...match.matched, alertId: match.alertId }
    batch.noteJoined(alert.organizationId, match.incidentId, { alertId, rule: match.rule.kind, score, matched, linkedBy: null })
    return { incidentId: match.incidentId, action: 'joined' }
  }
  if (!URGENT_PRIORITIES.has(alert.priority)) return undefined
  const incidentId = await open(trx, alert)
  batch.opened(alert.organizationId, alert)
  return { incidentId, action: 'opened' }
}

const windowOf = (rule: CorrelationRule) => ('windowMinutes' in rule ? rule.windowMinutes : undefined)

type Alert = NewAlert & { priority: string; title: string }

/** Reopens the incident with the alert in it; answers 'linked' when another alert of the batch reopened it already. */
async function reopen(trx: Executor, alert: Alert, resolved: { incidentId: string; alertId: string }) {
  const incident = await findIncident(trx, alert.organizationId, resolved.incidentId, true)
  if (!incident) return undefined
  const reopening = incident.status === 'resolved'
  if (reopening) await reopenIncident(trx, alert, incident.id)
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
  return reopening ? ('reopened' as const) : ('linked' as const)
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
