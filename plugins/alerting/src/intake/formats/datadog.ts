import { fingerprintOf, instantOf, linkOf, priorityOf, refuse, text, type IngestedEvent, type JsonObject } from '../event.js'

/**
 * Datadog webhooks carry whatever payload template is pasted in the integration; this reads the
 * one in docs/decisions/0007 ($ALERT_TRANSITION, $AGGREGATE, $ALERT_PRIORITY, $TAGS...).
 */
export function readDatadog(body: JsonObject): IngestedEvent[] {
  const title = text(body.title)
  if (!title) refuse('a Datadog event needs `title` ($EVENT_TITLE): paste the documented payload template')
  const transition = text(body.alert_transition)?.toLowerCase() ?? 'triggered'
  const tags = (text(body.tags) ?? '')
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)
  const labels = Object.fromEntries(
    tags.map((tag) => {
      const at = tag.indexOf(':')
      return at < 0 ? [tag, 'true'] : [tag.slice(0, at), tag.slice(at + 1)]
    }),
  )
  return [
    {
      fingerprint: text(body.aggregate) ?? text(body.alert_id) ?? fingerprintOf(title),
      action: transition === 'recovered' ? 'resolve' : 'fire',
      title,
      description: text(body.body),
      priority: priorityOf(body.priority),
      service: labels.service,
      groupKey: text(body.alert_id),
      labels,
      occurredAt: text(body.date),
      startedAt: instantOf(body.date),
      sourceUrl: linkOf(body.link),
    },
  ]
}
