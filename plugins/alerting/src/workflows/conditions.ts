import type { Executor } from '@svc/db'
import { type AlertRow } from '../alerts/index.js'
import { type DeployEventRow, deploysIn, minutesBefore } from '../intake/index.js'
import { fieldValue, incidentFacets, serviceFieldKeys, type IncidentRow } from '../incidents/index.js'
import type { Condition, ConditionOutcome } from './schemas.js'

/** What a run is about: the alert of an alert trigger, the deploy of `deploy.recorded`, the incident of an incident trigger. */
export type Subject =
  | { kind: 'alert'; alert: AlertRow }
  | { kind: 'deploy'; deploy: DeployEventRow }
  | { kind: 'incident'; incident: IncidentRow; change?: IncidentChangeData }

/** The change that triggered an incident run, as its timeline row records it. */
export interface IncidentChangeData {
  kind: string
  data: Record<string, unknown>
}

const quoted = (values: readonly string[]) => values.map((value) => `"${value}"`).join(', ')
const among = (value: string | null, values: readonly string[], what: string) => ({
  matched: value !== null && values.includes(value),
  detail: value === null ? `no ${what}` : `${what} "${value}" ${values.includes(value) ? 'is' : 'is not'} one of ${quoted(values)}`,
})

/**
 * Whether one condition holds for the subject at the event's time. A condition of the other
 * kind of subject (which the routes refuse) does not hold and says why.
 */
async function evaluateOne(
  db: Executor,
  organizationId: string,
  condition: Condition,
  subject: Subject,
  occurredAt: Date,
): Promise<Omit<ConditionOutcome, 'type'>> {
  if (subject.kind === 'incident') return evaluateOnIncident(db, organizationId, condition, subject.incident, subject.change)
  if (condition.type === 'service') {
    const service = subject.kind === 'alert' ? subject.alert.service : subject.deploy.service
    return among(service, condition.in, 'service')
  }
  if (subject.kind === 'deploy') {
    const { deploy } = subject
    if (condition.type === 'environment') return among(deploy.environment, condition.in, 'environment')
    if (condition.type === 'deploy_status') return among(deploy.status, condition.in, 'status')
    return { matched: false, detail: `${condition.type} applies to alerts only` }
  }
  const { alert } = subject
  switch (condition.type) {
    case 'priority':
      return among(alert.priority, condition.in, 'priority')
    case 'source':
      return among(alert.source, condition.in, 'source')
    case 'labels': {
      const labels = alert.labels as Record<string, string>
      const differing = Object.entries(condition.match).filter(([key, value]) => labels[key] !== value)
      return differing.length === 0
        ? { matched: true, detail: 'every label matches' }
        : { matched: false, detail: `label ${differing.map(([key]) => `"${key}"`).join(', ')} does not match` }
    }
    case 'deploy_recent': {
      const service = condition.service ?? alert.service
      if (!service) return { matched: false, detail: 'the alert has no service and the condition names none' }
      const [latest] = await deploysIn(db, organizationId, {
        services: [service],
        ...minutesBefore(occurredAt, condition.withinMinutes),
        limit: 1,
      })
      return latest
        ? {
            matched: true,
            detail: `${service} was deployed at ${latest.deployedAt.toISOString()}${latest.version ? ` (${latest.version})` : ''}`,
          }
        : { matched: false, detail: `no deploy of ${service} in the ${condition.withinMinutes} minutes before` }
    }
    default:
      return { matched: false, detail: `${condition.type} applies to deploys only` }
  }
}

/** A value of a custom field as text, as conditions compare it (a multi_select: each of its values). */
const asTexts = (value: unknown): string[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value.map(String) : [String(value)]

/**
 * Whether a condition holds for an incident as it is when the run begins (decision 0031), except
 * for what the triggering change itself set: a severity change's severity and a field change's
 * value are the change's, so two quick changes each run on their own value.
 */
async function evaluateOnIncident(
  db: Executor,
  organizationId: string,
  condition: Condition,
  incident: IncidentRow,
  change: IncidentChangeData | undefined,
): Promise<Omit<ConditionOutcome, 'type'>> {
  const fields = incident.fields as Record<string, unknown>
  const changed = (kind: string, key: string) => change?.kind === kind && (kind !== 'field_changed' || change.data.field === key)
  switch (condition.type) {
    case 'incident_type':
      return among(incident.typeKey ?? 'none', condition.in, 'type')
    case 'severity':
      return among(changed('severity_changed', '') ? String(change!.data.to) : incident.severity, condition.in, 'severity')
    case 'field': {
      const values = asTexts(changed('field_changed', condition.field) ? change!.data.to : fieldValue(fields, condition.field))
      if (values.length === 0) return { matched: false, detail: `field ${condition.field} is not set` }
      const held = values.filter((value) => condition.in.includes(value))
      return held.length > 0
        ? { matched: true, detail: `field ${condition.field} holds "${held[0]}"` }
        : { matched: false, detail: `field ${condition.field} holds none of ${quoted(condition.in)}` }
    }
    case 'service':
    case 'labels': {
      const facets = await incidentFacets(db, organizationId, [incident.id])
      if (condition.type === 'labels') {
        const held = new Set(facets.labels.map((label) => `${label.key}\u0000${label.value}`))
        const differing = Object.entries(condition.match).filter(([key, value]) => !held.has(`${key}\u0000${value}`))
        return differing.length === 0
          ? { matched: true, detail: 'an alert of the incident carries every label' }
          : { matched: false, detail: `no alert of the incident carries label ${differing.map(([key]) => `"${key}"`).join(', ')} as given` }
      }
      // Its alerts' services and the values of its service fields (catalog keys), compared in any letter case.
      const serviceFields = (await serviceFieldKeys(db, organizationId)).flatMap((key) => asTexts(fieldValue(fields, key)))
      const services = new Set([...facets.services.map((facet) => facet.service), ...serviceFields])
      const wanted = new Set(condition.in.map((name) => name.toLowerCase()))
      const hit = [...services].find((service) => wanted.has(service.toLowerCase()))
      return hit
        ? { matched: true, detail: `service "${hit}" is one of ${quoted(condition.in)}` }
        : { matched: false, detail: `none of the incident's services is one of ${quoted(condition.in)}` }
    }
    default:
      return { matched: false, detail: `${condition.type} does not apply to incidents` }
  }
}

/** Every condition's outcome, in order; the run acts only when all of them hold. */
export async function evaluateConditions(
  db: Executor,
  organizationId: string,
  conditions: Condition[],
  subject: Subject,
  occurredAt: Date,
): Promise<ConditionOutcome[]> {
  const outcomes: ConditionOutcome[] = []
  for (const condition of conditions)
    outcomes.push({ type: condition.type, ...(await evaluateOne(db, organizationId, condition, subject, occurredAt)) })
  return outcomes
}
