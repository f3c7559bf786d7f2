// The alerts module's door: what the modules above it may use (docs/alerting.md).
export { fireCheckAlert, resolveCheckAlert, resolvedSince } from './check-alerts.js'
export {
  ackLinksWithSmsCode,
  attemptOfMessage,
  type AttemptRow,
  chatsPagedAbout,
  claimDueRepages,
  claimPendingEscalations,
  claimStep,
  ESCALATION_STATES,
  type EscalationChange,
  type EscalationState,
  findAckLink,
  findEscalation,
  heldBySilence,
  insertAckLinks,
  insertAlertEvents,
  insertAttempt,
  insertAttempts,
  listAttempts,
  lockOrCreateEscalation,
  type NewAckLink,
  type NewAttempt,
  type QueuedAttempt,
  queuedAttempts,
  setEscalation,
  setEscalations,
  settleAttempt,
  settleAttempts,
  useAckLink,
} from './escalation-state.js'
export { type AlertEventSubscriber, type DispatchInterest } from './event-bus.js'
export { type ConfigCheck, fireAlert, fireAlerts, type Fired, type Firing, type IngestedEvent, moveAlertFromSource } from './fire.js'
export { type AlertMove, moveAlertByPerson, moveAlerts, reopenAlert } from './lifecycle.js'
export { priorities, type Priority, URGENT_PRIORITIES, webhookFormats, type WebhookFormat } from './model.js'
export {
  type AlertEventType,
  type AlertRow,
  alertsByIds,
  findAlert,
  listAlertEvents,
  openCommandRoom,
  recordAlertEvent,
  setAlertPriority,
} from './queries.js'
export { Alert, alertBody, AlertEvent, AlertParams, eventBody } from './schemas.js'
