import {
  fingerprintOf,
  instantOf,
  isObject,
  labelsOf,
  linkOf,
  priorityOf,
  refuse,
  text,
  type IngestedEvent,
  type JsonObject,
} from '../event.js'

/**
 * Prometheus Alertmanager webhook (version 4), and Grafana unified alerting, which sends the
 * same envelope: one event per `alerts[]` item, its `fingerprint` as the dedup key, `status:
 * resolved` resolving it, the envelope's `groupKey` grouping them.
 */
export function readAlertmanager(body: JsonObject): IngestedEvent[] {
  if (!Array.isArray(body.alerts) || body.alerts.length === 0) refuse('an Alertmanager delivery needs a non-empty `alerts` list')
  const commonLabels = labelsOf(body.commonLabels)
  const commonAnnotations = labelsOf(body.commonAnnotations)
  return body.alerts.map((alert, index) => {
    if (!isObject(alert)) refuse(`alerts[${index}] is not an object`)
    const labels = { ...commonLabels, ...labelsOf(alert.labels) }
    const annotations = { ...commonAnnotations, ...labelsOf(alert.annotations) }
    const title = annotations.summary ?? text(alert.title) ?? labels.alertname ?? text(body.title)
    if (!title) refuse(`alerts[${index}] has no alertname label or summary annotation`)
    return {
      fingerprint:
        text(alert.fingerprint) ??
        fingerprintOf(
          ...Object.entries(labels)
            .sort()
            .map(([key, value]) => `${key}=${value}`),
        ),
      action: text(alert.status)?.toLowerCase() === 'resolved' ? 'resolve' : 'fire',
      title,
      description: annotations.description ?? annotations.message ?? text(alert.message),
      priority: priorityOf(labels.priority) ?? priorityOf(labels.severity),
      service: labels.service ?? labels.job,
      groupKey: text(body.groupKey),
      labels,
      // No occurredAt: `startsAt` stays the same in every repeat notification of a firing alert,
      // and a repeat is a new occurrence, not a retry. It is when the alert began.
      startedAt: instantOf(alert.startsAt),
      // Prometheus' runbook convention, and the expression's graph in Prometheus (Grafana's panel).
      runbookUrl: linkOf(annotations.runbook_url ?? annotations.runbook),
      sourceUrl: linkOf(alert.generatorURL) ?? linkOf(alert.panelURL) ?? linkOf(body.externalURL),
    }
  })
}
