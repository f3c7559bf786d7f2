// The oncall module's door: what the modules above it may use (docs/alerting.md).
export {
  type ContactReader,
  type PagingChannel,
  type PagingPreferences,
  inQuietHours,
  planFor,
  type PreferencesReader,
  type PushReader,
  urgencyOf,
} from './paging-plan.js'
export { activeMembersAmong, emailsOf } from './people.js'
export { ackTimeoutFromNow, findPolicy, policiesAmong, storedSteps } from './policies/queries.js'
export { type MatchedAlert, type Matchers, matchesAlert, routeAlert, RoutingRule, RoutingRules } from './policies/routing.js'
export { type Step, type Target } from './policies/schemas.js'
export { removeTargetEverywhere } from './policies/targets.js'
export { onCallUsers } from './schedules/on-call.js'
export { schedulesAmong } from './schedules/queries.js'
export { SILENCE_END_QUEUE, type SilenceEndJob } from './silences/ending.js'
export { silenceEnd, silencesInForce } from './silences/queries.js'
export { type MaintenanceQuiet, quietForMaintenance } from './silences/maintenance.js'
export { dependencyNameEdges, serviceEdgeNames } from './services/edges.js'
export {
  type CatalogEntry,
  catalogEntryOf,
  catalogEntriesOf,
  catalogRoutedOrganizations,
  serviceIdsByKey,
  servicePoliciesOf,
  withCatalogNames,
} from './services/queries.js'
export { supportHoursOf } from './support-hours/queries.js'
export { teamResponders, teamsAmong } from './teams/queries.js'
export { oncallModule } from './plugin.js'
export type { ServiceShowings } from './services/routes.js'
