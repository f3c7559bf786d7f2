import type { Executor } from '@svc/db'
import { type AlertRow } from '../alerts/index.js'
import { type DeployEventRow, deploysIn, minutesBefore } from '../intake/index.js'
import type { Condition, ConditionOutcome } from './schemas.js'

/** What a run is about: the alert of an alert trigger, or the deploy of `deploy.recorded`. */
export type Subject = { kind: 'alert'; alert: AlertRow } | { kind: 'deploy'; deploy: DeployEventRow }

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
