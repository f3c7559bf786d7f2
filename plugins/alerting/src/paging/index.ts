// The paging module's door: what the modules above it may use (docs/alerting.md).
export { type Escalator } from './escalator.js'
export { CHAT_QUEUE, type ChatJob } from './queues.js'
