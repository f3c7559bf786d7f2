import { isObject, refuse, type IngestedEvent } from '../event.js'
import type { WebhookFormat } from '../configs/schemas.js'
import { readAlertmanager } from './alertmanager.js'
import { readDatadog } from './datadog.js'
import { readGeneric } from './generic.js'
import { readPagerDuty } from './pagerduty.js'

/**
 * The events of one delivery, read the way the config's format says. A body without the
 * format's own envelope (no `alerts`, no `event_action`) is read as generic, so it is accepted
 * when it has a title; anything else is a 400.
 */
export function readEvents(format: WebhookFormat, body: unknown): IngestedEvent[] {
  if (!isObject(body)) refuse('the body must be a JSON object')
  switch (format) {
    case 'alertmanager':
    case 'grafana':
      return Object.hasOwn(body, 'alerts') ? readAlertmanager(body) : readGeneric(body)
    case 'pagerduty':
      return Object.hasOwn(body, 'event_action') ? readPagerDuty(body) : readGeneric(body)
    case 'datadog':
      return readDatadog(body)
    default:
      return readGeneric(body)
  }
}
