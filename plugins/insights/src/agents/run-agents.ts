import type { Executor, Json } from '@svc/db'
import { pagingPoliciesOf } from '@svc/plugin-alerting'
import { incidentTemplatesFor } from '@svc/plugin-statuspages'
import type { Investigation } from '../investigation/investigate.js'
import { agentSwitches, recordAgentOutput } from '../queries/agents.js'
import { runbooksFor } from '../queries/runbooks.js'
import { draftComms } from './comms-agent.js'
import { oncallBrief } from './oncall-agent.js'
import { matchRunbooks } from './runbook-agent.js'

/**
 * The runbook, comms and on-call agents after an investigation, in its completing transaction:
 * each one the organization runs records its output with what it used (the investigation, the
 * runbooks considered, the escalation policies read). They work from the investigation's
 * findings, so a model's investigation makes them better without a model call of their own.
 */
export async function runAgents(trx: Executor, organizationId: string, analysisId: string, investigation: Investigation): Promise<void> {
  const switches = await agentSwitches(trx, organizationId)
  const { subject, findings, gathered } = investigation
  const causeService = findings.probableCause.service
  const services = [...new Set([...subject.services, ...(causeService ? [causeService] : [])])]
  const base = { investigationId: analysisId, subject: { kind: subject.kind, id: subject.id, reference: subject.reference } }

  const runbooks = switches.runbook || switches.oncall ? await runbooksFor(trx, organizationId, services) : []
  const matches = matchRunbooks(subject, findings, runbooks)
  if (switches.runbook)
    await recordAgentOutput(
      trx,
      organizationId,
      analysisId,
      'runbook',
      { ...base, runbooksConsidered: runbooks.map((runbook) => ({ id: runbook.id, version: runbook.version })) } as Json,
      { matches } as unknown as Json,
    )
  if (switches.comms) {
    const componentIds = (gathered.components ?? []).map((row) => row.id)
    const templates = await incidentTemplatesFor(trx, organizationId, componentIds)
    const draft = draftComms(subject, findings, gathered, templates)
    await recordAgentOutput(
      trx,
      organizationId,
      analysisId,
      'comms',
      {
        ...base,
        status: subject.status,
        category: findings.probableCause.category,
        components: componentIds,
        templatesConsidered: templates.map((template) => template.key),
      } as Json,
      {
        ...draft,
        // Only a person publishes it: with this request (an incident's), or by writing their own.
        publish:
          subject.kind === 'incident'
            ? {
                method: 'POST',
                path: `/api/v1/organizations/${organizationId}/incidents/${subject.id}/status-updates`,
                body: { ...draft.statusPageUpdate, publish: true, draftOf: analysisId },
              }
            : null,
      } as unknown as Json,
    )
  }
  if (switches.oncall) {
    const policies = await pagingPoliciesOf(trx, organizationId, services)
    const brief = oncallBrief(subject, findings, gathered, matches, policies)
    await recordAgentOutput(
      trx,
      organizationId,
      analysisId,
      'oncall',
      { ...base, runbook: matches[0]?.runbookId ?? null, policiesRead: policies.map((policy) => policy.policyId) } as Json,
      brief as unknown as Json,
    )
  }
}
