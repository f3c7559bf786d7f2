// The chat module's door: what the modules above it may use (docs/alerting.md).
export { chatAlertOf, createChatDelivery } from './delivery.js'
export { chatModule } from './plugin.js'
export { incidentChannel, incidentChannelRequested, requestIncidentChannel } from './slack/queries.js'
