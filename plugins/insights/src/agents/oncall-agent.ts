import type { Findings } from '../investigation/findings.js'
import { describeDeploy } from '../investigation/planner.js'
import type { Subject } from '../investigation/subject.js'
import type { Gathered } from '../investigation/tools.js'
import type { RunbookMatch } from './runbook-agent.js'

// The on-call agent (decision 0021, "The other agents"): the two lines a responder reads first
// (what is failing; the suspect change and the runbook to open), and whom to add when the
// evidence points at a service another escalation policy answers for.

export interface OncallBrief {
  lines: [string, string]
  suggestions: Array<{ service: string; policyId: string; policyName: string; why: string }>
}

export interface PagingPolicy {
  service: string
  policyId: string
  policyName: string
}

export function oncallBrief(
  subject: Subject,
  findings: Findings,
  gathered: Gathered,
  runbooks: RunbookMatch[],
  policies: PagingPolicy[],
): OncallBrief {
  const services = subject.services.length > 0 ? subject.services.slice(0, 3).join(', ') : 'an unknown service'
  const since = subject.onset.toISOString().slice(11, 16)
  const first = `${subject.priority} ${services} failing since ${since} UTC: ${subject.title}`
  const suspect = findings.suspectDeploys[0]
  const deploy = [...(gathered.deploys ?? []), ...(gathered.configChanges ?? [])].find((row) => row.id === suspect?.deployId)
  const cause = deploy
    ? `Suspect: ${describeDeploy(deploy)}, ${deploy.minutesBeforeOnset} min before`
    : findings.probableCause.category === 'unknown'
      ? 'No suspect change'
      : `Likely ${findings.probableCause.category}${findings.probableCause.service ? ` (${findings.probableCause.service})` : ''}, no suspect change`
  const runbook = runbooks[0] ? `runbook "${runbooks[0].title}"` : 'no runbook matched'
  const second = `${cause} · ${runbook}`

  // A cause in a service whose alerts another policy pages for: that policy's people should join.
  const pagingHere = new Set(policies.filter((policy) => subject.services.includes(policy.service)).map((policy) => policy.policyId))
  const causeService = findings.probableCause.service ?? deploy?.service
  const suggestions = policies
    .filter((policy) => policy.service === causeService && !pagingHere.has(policy.policyId))
    .map((policy) => ({
      ...policy,
      why: `the probable cause lies in ${policy.service}, whose alerts page "${policy.policyName}"`,
    }))
  return { lines: [first.slice(0, 200), second.slice(0, 200)], suggestions }
}
