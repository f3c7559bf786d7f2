export { publish, subscribe } from './bus.js'
export {
  alertGetsAnalysis,
  type AlertCreated,
  type AlertPriority,
  type AnalysisCompleted,
  type CheckState,
  type CheckStateChanged,
  type DeployRecorded,
  type EventName,
  type EventPayloads,
  type IncidentChanged,
  type IncidentReference,
  type MemberRemoved,
  type StatusPageIncidentOpened,
  type StatusPageIncidentUpdateRequested,
  type StatusPageUpdateRequested,
  URGENT_PRIORITIES,
} from './payloads.js'
