import type { ComponentStatus } from '../model.js'

// What the public reads when a status page incident opens without words a person chose: the
// page's own component names and how badly they are affected, never the internal alert or
// incident title (which names hosts, metrics and thresholds). Statuspage's incident templates
// and incident.io's "write for your customers" guidance both start from the affected components.

const HOW_AFFECTED: Record<Exclude<ComponentStatus, 'operational' | 'under_maintenance'>, string> = {
  major_outage: 'Outage',
  partial_outage: 'Partial outage',
  degraded_performance: 'Degraded performance',
}

const inEnglish = new Intl.ListFormat('en', { type: 'conjunction' })

/** "Checkout", "Checkout and Search", "Checkout, Search, and Login"; a name two components share, once. */
function componentList(names: string[]): string {
  return names.length === 0 ? 'some of our services' : inEnglish.format([...new Set(names)])
}

/** The public name of an incident affecting these components, at most 200 characters. */
export function publicIncidentName(status: ComponentStatus, componentNames: string[]): string {
  const how = status === 'operational' || status === 'under_maintenance' ? 'Problems' : HOW_AFFECTED[status]
  const name = `${how} affecting ${componentList(componentNames)}`
  return name.length <= 200 ? name : `${how} affecting ${componentNames.length} services`
}

/** What the public reads at each step of an incident opened for them (a person may reword it before publishing). */
export const publicWords = {
  investigating: (componentNames: string[]) =>
    `We are investigating problems affecting ${componentList(componentNames)}. We will post an update as soon as we know more.`,
  identified: 'The issue has been identified and a fix is being worked on.',
  resolved: 'This incident has been resolved.',
}
