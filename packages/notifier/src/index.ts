export {
  DeliveryError,
  channels,
  type Channel,
  type EmailEnvelope,
  type EmailProvider,
  type OutboundEmail,
  type OutboxStatus,
} from './message.js'
export { DELIVER_QUEUE, createNotifier, type Notifier, type NotifierDependencies } from './notifier.js'
export { latestOutboxRows } from './outbox.js'
export { smtpProvider } from './smtp.js'
