// P1 and P2 open an incident, have a command room and get an analysis: the product's one rule.
export { URGENT_PRIORITIES } from '@svc/events'

/** Alert priorities, most urgent first. */
export const priorities = ['P1', 'P2', 'P3', 'P4', 'P5'] as const
export type Priority = (typeof priorities)[number]

/** Where alerts come from: the formats ingestion reads, a synthetic check, or alerting itself (a responder request). */
export const webhookFormats = ['generic', 'alertmanager', 'grafana', 'pagerduty', 'datadog', 'synthetics', 'alerting'] as const
export type WebhookFormat = (typeof webhookFormats)[number]
