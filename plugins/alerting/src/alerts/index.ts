// The alerts module's door: what the modules above it may use (docs/alerting.md).
export { fireCheckAlert, resolveCheckAlert, resolvedSince } from './check-alerts.js'
export {
  alertsEscalating,
  claimDueRepages,
  claimPendingEscalations,
  claimStep,
  ESCALATION_STATES,
  type EscalationChange,
  type EscalationState,
  findEscalation,
  heldBySilence,
  insertAlertEvents,
  lockOrCreateEscalation,
  pendingEscalationExists,
  REPAGE_DUE_EXISTS,
  repageAcknowledgedAt,
  setEscalation,
  setEscalations,
} from './escalation-state.js'
export { type AlertEventSubscriber, type BusEvent, createAlertEventBus, type DispatchInterest } from './event-bus.js'
export {
  type ConfigCheck,
  type EnabledConfigs,
  fireAlert,
  fireAlerts,
  type Fired,
  type Firing,
  type IngestedEvent,
  moveAlertFromSource,
  urgent,
} from './fire.js'
export { type AckTimeout, type AlertMove, moveAlertByPerson, moveAlerts, type MoveTo, reopenAlert } from './lifecycle.js'
export { priorities, type Priority, URGENT_PRIORITIES, webhookFormats, type WebhookFormat } from './model.js'
export {
  alertColumns,
  type AlertEventType,
  type AlertRow,
  alertsByIds,
  alertWaitingForBus,
  alertsRelation,
  findAlert,
  listAlertEvents,
  openCommandRoom,
  type PublishedAlert,
  raiseAlert,
  recentServiceNames,
  recordAlertEvent,
  setAlertPriority,
} from './queries.js'
export { Alert, alertBody, AlertEvent, AlertIncident, AlertParams, eventBody } from './schemas.js'
export { alertsModule } from './plugin.js'
