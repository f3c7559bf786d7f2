// The paging module's door: what the modules above it may use (docs/alerting.md).
export { createEscalator, type Escalator } from './escalator.js'
export { CHAT_QUEUE, type ChatJob } from './queues.js'
export { pagingModule } from './plugin.js'
export type { SmsOptOut } from './twilio-routes.js'
export { resolvedNoticeSubscriber } from './resolved-notices.js'
export { chatsPagedAbout, type QueuedAttempt, queuedAttempts, settleAttempt, settleAttempts } from './queries.js'
export { requestResponders, type RequestTarget } from './responder-requests.js'
