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

const actions = new Map<string, IngestedEvent['action']>([
  ['trigger', 'fire'],
  ['acknowledge', 'acknowledge'],
  ['resolve', 'resolve'],
])

/** The first of an event's `links` whose text says it is a runbook (PagerDuty has no runbook field). */
function runbookOf(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined
  for (const link of links)
    if (isObject(link) && /runbook|playbook/i.test(text(link.text) ?? '')) {
      const href = linkOf(link.href)
      if (href) return href
    }
  return undefined
}

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
      runbookUrl: runbookOf(body.links),
      sourceUrl: linkOf(body.client_url),
    },
  ]
}
