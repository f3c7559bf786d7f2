export {
  DeliveryError,
  channels,
  type Channel,
  type EmailEnvelope,
  type EmailProvider,
  type MessageProvider,
  type OutboundEmail,
  type OutboundMessage,
  type OutboundMessageRequest,
  type OutboxStatus,
} from './message.js'
export { DELIVER_QUEUE, NO_PROVIDER, createNotifier, type Notifier, type NotifierDependencies } from './notifier.js'
export { latestOutboxRows, outboxMessage, pruneOutbox, recordDeliveryReport } from './outbox.js'
export { TWILIO_STATUS_PATH, TWILIO_VOICE_PATH, twilioProviders } from './twilio.js'
export { smtpProvider } from './smtp.js'
export { pushRecipient, webPushProvider, type WebPushSubscription } from './web-push.js'
export { webhookProvider, type WebhookProviderOptions, type WebhookTarget } from './webhook.js'
export { CATCHABLE, catcherProvider } from './catcher.js'
export { adaptiveCardMessage } from './adaptive-card.js'
export { mrkdwn } from './mrkdwn.js'
