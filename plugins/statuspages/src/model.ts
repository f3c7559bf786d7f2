import { en } from './i18n/en.js'

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

/** What a page's overall status says, before it is put in words (the i18n catalogs' `overall`). */
export type OverallState = 'operational' | 'maintenance' | 'minor' | 'major' | 'critical'

/**
 * The page's indicator and its words, as Statuspage computes them: the worst of the unresolved
 * incidents' impacts and the components' statuses. Components under maintenance and nothing worse
 * read "Service Under Maintenance" with the indicator `none`. `description` is Statuspage's
 * English, which the v2 documents and webhook payloads keep in every language; `state` is what a
 * page in another language puts in its own words. Pass `bannerStatusOf` each component's status.
 */
export function overallStatus(componentStatusList: ComponentStatus[], openImpacts: IncidentImpact[]) {
  const levels = [...componentStatusList.map((status) => indicatorOfStatus[status]), ...openImpacts]
  const indicator = levels.reduce<Indicator>(
    (worst, level) => (incidentImpacts.indexOf(level) > incidentImpacts.indexOf(worst) ? level : worst),
    'none',
  )
  const state: OverallState =
    indicator === 'none' ? (componentStatusList.includes('under_maintenance') ? 'maintenance' : 'operational') : indicator
  return { indicator, state, description: en.overall[state] }
}

/**
 * The status a component brings to its page's overall status: what it shows where the page follows
 * checks, else what people declared of it (its checks' verdicts alone raise no banner: decision
 * 0015, "The banner").
 */
export function bannerStatusOf(
  component: { status: string; declaredStatus: string },
  page: { bannerFollowsChecks: boolean },
): ComponentStatus {
  return (page.bannerFollowsChecks ? component.status : component.declaredStatus) as ComponentStatus
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
