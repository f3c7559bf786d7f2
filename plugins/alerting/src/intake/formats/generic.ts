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

const resolving = new Set(['resolved', 'resolve', 'ok', 'recovered', 'closed'])
const acknowledging = new Set(['acknowledged', 'acknowledge', 'ack'])

/**
 * The generic shape (docs/decisions/0007): `title` (required), `description`, `priority` (P1..P5
 * or a severity word), `status` (`firing`, `resolved`, `acknowledged`), `fingerprint` or
 * `dedupKey`, `service`, `groupKey`, `labels`, `timestamp`, `startedAt`, `runbookUrl`, `sourceUrl`.
 * Unknown shapes are read this way too.
 */
export function readGeneric(body: JsonObject): IngestedEvent[] {
  const title = text(body.title) ?? text(body.summary) ?? text(body.name)
  if (!title) refuse('the event has no title: send `title` (see the generic format), or pick the format of the tool that sends it')
  const status = text(body.status)?.toLowerCase() ?? text(body.state)?.toLowerCase() ?? 'firing'
  const service = text(body.service)
  return [
    {
      fingerprint: text(body.fingerprint) ?? text(body.dedupKey) ?? text(body.dedup_key) ?? fingerprintOf(title, service),
      action: resolving.has(status) ? 'resolve' : acknowledging.has(status) ? 'acknowledge' : 'fire',
      title,
      description: text(body.description) ?? text(body.message),
      priority: priorityOf(body.priority) ?? priorityOf(body.severity),
      service,
      groupKey: text(body.groupKey),
      labels: isObject(body.labels) ? labelsOf(body.labels) : {},
      occurredAt: text(body.timestamp),
      startedAt: instantOf(body.startedAt ?? body.startsAt ?? body.timestamp),
      runbookUrl: linkOf(body.runbookUrl ?? body.runbook_url ?? body.runbook),
      sourceUrl: linkOf(body.sourceUrl ?? body.source_url ?? body.url),
    },
  ]
}
