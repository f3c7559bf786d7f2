// The queues paging fills and another module works: paging owns their names and payloads, so it
// never imports its consumer (chat imports this, as a subscriber of @svc/events imports the event).

/** One job per chat message of an escalation step: `{ attemptId }`, posted by chat (chat/delivery.ts). */
export const CHAT_QUEUE = 'alerting.chat-delivery'

export interface ChatJob {
  attemptId: string
}
