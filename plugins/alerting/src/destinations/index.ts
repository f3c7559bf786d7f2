// The destinations module's door: what the modules above it may use (docs/alerting.md).
export { type ChatAlert, type ChatDeploy, type ChatIncident, slackMessage } from './chat-integrations/messages.js'
export { slackCommandPath, slackInteractivityPath } from './chat-integrations/paths.js'
export {
  type ChatIntegrationRow,
  chatIntegrationsAmong,
  slackAppsAmong,
  chatIntegrationsByIds,
  findChatIntegration,
  findSlackIntegration,
  interactiveIntegrations,
  type SlackIntegration,
} from './chat-integrations/queries.js'
export { ChatFailure, type ChatSender } from './chat-integrations/send.js'
export { slackClient, slackErrorOf } from './chat-integrations/slack-client.js'
export { alertPayload, type OutboundEvent, type WebhookDelivery } from './outbound-webhooks/delivery.js'
export { findOutboundWebhook, outboundWebhooksAmong } from './outbound-webhooks/queries.js'
export { createChatSender } from './chat-integrations/send.js'
export { createOutboundClient } from './http.js'
export { createWebhookDelivery } from './outbound-webhooks/delivery.js'
export { outboundWebhookSubscriber } from './outbound-webhooks/subscriber.js'
export { destinationsModule } from './plugin.js'
export { createTrackerClient, type Ticket, type TrackerAccount, type TrackerClient, TrackerFailure } from './trackers/client.js'
export { type TicketEvent, ticketEventOf, trackerSignatureHolds } from './trackers/events.js'
export { findTracker, trackerForEvents, trackersAmong, type TrackerRow } from './trackers/queries.js'
export { openTrackerValue } from './trackers/seal.js'
export { trackerEventsPath } from './trackers/paths.js'
