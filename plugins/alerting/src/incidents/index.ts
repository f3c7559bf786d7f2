// The incidents module's door: what the modules above it may use (docs/alerting.md).
export { type LatestAnalysesReader, type LatestAnalysis, type LatestAnalysisReader } from './alert-command-room-routes.js'
export { fullIncidentBody, incidentAuditOf, incidentOrNotFound, timelineEntry } from './common.js'
export { type Severity, SEVERITY_KEY_PATTERN } from './model.js'
export { priorityOfIncidentSeverity, severitiesOf, usualSeverity } from './shaping/severities.js'
export {
  type Actor,
  type SystemActor,
  addTimelineText,
  assignIncidentRole,
  declareIncident,
  editIncident,
  joinIncident,
  snoozeIncident,
} from './operations.js'
export {
  addTimeline,
  alertIdsOfIncident,
  alertsLinkedByRule,
  chatBehind,
  claimIncidentsBehind,
  INCIDENT_CHAT_BEHIND_EXISTS,
  escalatingAlertOf,
  incidentByNumber,
  incidentFacets,
  incidentPeople,
  markChatSynced,
  retryChatSyncAfter,
  timelineSince,
  type AlertIncidents,
  findIncident,
  findTimelineEntry,
  incidentOfAlert,
  incidentsOfAlerts,
  type LinkedIncident,
  incidentResponders,
  incidentRoles,
  linkAlerts,
  lockPagingOfIncidents,
  openIncidentsOf,
  PAGING_STATES,
  recentLinksPerTarget,
  repageContextOf,
  updateIncident,
  type IncidentRow,
} from './queries.js'
export { Incident, IncidentParams, SnoozeIncident } from './schemas.js'
export { fieldValuesOfWords } from './shaping/filters.js'
export { actionItemTickets, addFollowUp, openActionItemTicket } from './follow-ups/operations.js'
export { setTaskDone } from './checklists/operations.js'
export { fieldKeysOf, serviceFieldKeys } from './shaping/queries.js'
export { shownFieldsOf } from './shaping/shown.js'
export { fieldValue } from './shaping/values.js'
export { alertMovesSubscriber } from './alert-moves.js'
export { createIncidentChangeBus, type IncidentChange, type IncidentChangeSubscriber } from './change-bus.js'
export { correlationSubscriber } from './correlation/subscriber.js'
export { type AnalysisCheck, type RcaReader, type StatusIncidentsReader } from './links-routes.js'
export { postStatusUpdate } from './status-pages.js'
export { incidentsModule } from './plugin.js'
