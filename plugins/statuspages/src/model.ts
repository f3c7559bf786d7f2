/** A component's status, Statuspage's values, from best to worst (maintenance sits below any outage). */
export const componentStatuses = ['operational', 'under_maintenance', 'degraded_performance', 'partial_outage', 'major_outage'] as const
export type ComponentStatus = (typeof componentStatuses)[number]

export const incidentStatuses = ['investigating', 'identified', 'monitoring', 'resolved'] as const
export type IncidentStatus = (typeof incidentStatuses)[number]

export const incidentImpacts = ['none', 'minor', 'major', 'critical'] as const
export type IncidentImpact = (typeof incidentImpacts)[number]

export const maintenanceStatuses = ['scheduled', 'in_progress', 'verifying', 'completed', 'cancelled'] as const
export type MaintenanceStatus = (typeof maintenanceStatuses)[number]

/** A page's overall indicator: Statuspage's `status.indicator`. */
export type Indicator = IncidentImpact

const rank = (status: ComponentStatus) => componentStatuses.indexOf(status)

/** The worse of component statuses; `operational` for none. */
export function worstStatus(statuses: Iterable<ComponentStatus>): ComponentStatus {
  let worst: ComponentStatus = 'operational'
  for (const status of statuses) if (rank(status) > rank(worst)) worst = status
  return worst
}

/** Statuspage's mapping of a component's status to the page indicator. */
const indicatorOfStatus: Record<ComponentStatus, Indicator> = {
  operational: 'none',
  under_maintenance: 'none',
  degraded_performance: 'minor',
  partial_outage: 'major',
  major_outage: 'critical',
}

/**
 * The page's indicator and its words, as Statuspage computes them: the worst of the unresolved
 * incidents' impacts and the components' statuses. Components under maintenance and nothing worse
 * read "Service Under Maintenance" with the indicator `none`.
 */
export function overallStatus(componentStatusList: ComponentStatus[], openImpacts: IncidentImpact[]) {
  const levels = [...componentStatusList.map((status) => indicatorOfStatus[status]), ...openImpacts]
  const indicator = levels.reduce<Indicator>(
    (worst, level) => (incidentImpacts.indexOf(level) > incidentImpacts.indexOf(worst) ? level : worst),
    'none',
  )
  const description =
    indicator === 'none'
      ? componentStatusList.includes('under_maintenance')
        ? 'Service Under Maintenance'
        : 'All Systems Operational'
      : { minor: 'Minor Service Outage', major: 'Partial System Outage', critical: 'Major System Outage' }[indicator]
  return { indicator, description }
}

/** Words for a component's status, as the public page shows them. */
export const statusWords: Record<ComponentStatus, string> = {
  operational: 'Operational',
  under_maintenance: 'Under Maintenance',
  degraded_performance: 'Degraded Performance',
  partial_outage: 'Partial Outage',
  major_outage: 'Major Outage',
}

/** Words for an incident's or maintenance's status. */
export const progressWords: Record<IncidentStatus | MaintenanceStatus, string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
  scheduled: 'Scheduled',
  in_progress: 'In progress',
  verifying: 'Verifying',
  completed: 'Completed',
  cancelled: 'Cancelled',
}

/** Maintenance moves forward only: a settled one (completed, cancelled) takes no further status. */
export function maintenanceMayMove(from: MaintenanceStatus, to: MaintenanceStatus): boolean {
  if (from === to) return true
  if (from === 'completed' || from === 'cancelled') return false
  if (to === 'cancelled') return from === 'scheduled' || from === 'in_progress'
  return maintenanceStatuses.indexOf(to) > maintenanceStatuses.indexOf(from)
}

/** Whether a maintenance in this status holds its components `under_maintenance`. */
export const maintenanceActive = (status: MaintenanceStatus) => status === 'in_progress' || status === 'verifying'
