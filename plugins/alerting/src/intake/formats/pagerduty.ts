import { fingerprintOf, instantOf, isObject, labelsOf, priorityOf, refuse, text, type IngestedEvent, type JsonObject } from '../event.js'

const actions = new Map<string, IngestedEvent['action']>([
  ['trigger', 'fire'],
  ['acknowledge', 'acknowledge'],
  ['resolve', 'resolve'],
])

/** PagerDuty Events API v2: `event_action` trigger/acknowledge/resolve, `dedup_key`, `payload`. */
export function readPagerDuty(body: JsonObject): IngestedEvent[] {
  const action = actions.get(text(body.event_action)?.toLowerCase() ?? '')
  if (!action) refuse('a PagerDuty event needs event_action trigger, acknowledge or resolve')
  const payload = isObject(body.payload) ? body.payload : {}
  const dedupKey = text(body.dedup_key)
  const title = text(payload.summary)
  if (action === 'fire' && !title) refuse('a PagerDuty trigger needs payload.summary')
  if (action !== 'fire' && !dedupKey) refuse(`a PagerDuty ${text(body.event_action)} needs dedup_key`)
  return [
    {
      fingerprint: dedupKey ?? fingerprintOf(title, text(payload.source)),
      action,
      title: title ?? dedupKey ?? '',
      description: text(payload.class),
      priority: priorityOf(payload.severity),
      service: text(payload.component) ?? text(payload.source),
      groupKey: text(payload.group),
      labels: { ...labelsOf(payload.custom_details), ...(text(payload.source) ? { source: text(payload.source) as string } : {}) },
      occurredAt: text(payload.timestamp),
      startedAt: instantOf(payload.timestamp),
    },
  ]
}
