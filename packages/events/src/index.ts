export { publish, subscribe } from './bus.js'
export {
  alertGetsAnalysis,
  type AlertCreated,
  type AlertPriority,
  type DeployRecorded,
  type EventName,
  type EventPayloads,
  type IncidentReference,
  type MemberRemoved,
} from './payloads.js'
