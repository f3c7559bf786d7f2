import { recordAudit, type AuditContext } from '@svc/audit'
import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { policiesTargeting, storedSteps, updatePolicy } from './queries.js'
import { activeMembersAmong } from '../people.js'
import { schedulesAmong } from '../schedules/queries.js'
import { teamsAmong } from '../teams/queries.js'
import type { Step, Target, TargetType } from './schemas.js'

/** Which of the given ids name targets of one kind in the organization. */
export type TargetLookup = (db: Executor, organizationId: string, ids: string[]) => Promise<Set<string>>

/**
 * The target kinds whose rows another module owns (chat integrations and outbound webhooks are
 * destinations'), given to the policy routes by the alerting root: on-call sits below them.
 */
export interface DestinationTargets {
  chat: TargetLookup
  webhook: TargetLookup
}

/** Every target must name a user (an active member), schedule, team, chat integration or outbound webhook of the organization: 400 naming it otherwise. */
export async function checkTargets(db: Executor, organizationId: string, steps: Step[], destinations: DestinationTargets): Promise<void> {
  const ids = (type: TargetType) => [...new Set(steps.flatMap((step) => step.targets.filter((t) => t.type === type).map((t) => t.id)))]
  const known: Record<TargetType, Set<string>> = {
    user: await activeMembersAmong(db, organizationId, ids('user')),
    schedule: await schedulesAmong(db, organizationId, ids('schedule')),
    team: await teamsAmong(db, organizationId, ids('team')),
    chat: await destinations.chat(db, organizationId, ids('chat')),
    webhook: await destinations.webhook(db, organizationId, ids('webhook')),
  }
  const what: Record<TargetType, string> = {
    user: 'is not an active member of the organization',
    schedule: 'is not a schedule of the organization',
    team: 'is not a team of the organization',
    chat: 'is not a chat integration of the organization',
    webhook: 'is not an outbound webhook of the organization',
  }
  steps.forEach((step, index) =>
    step.targets.forEach((target, position) => {
      if (!known[target.type].has(target.id)) throw invalidField(`steps/${index}/targets/${position}/id`, what[target.type])
    }),
  )
}

/** What a policy cannot do as stored: steps whose targets were all deleted. */
export function policyProblems(steps: Step[]): string[] {
  return steps.flatMap((step, index) =>
    step.targets.length === 0 ? [`steps/${index} has no targets left: it pages no one until one is added`] : [],
  )
}

/**
 * Takes a deleted user, schedule, team or chat integration out of every policy of the organization, one audit
 * entry per policy changed, in the caller's transaction. A step left without targets stays (its
 * delay still counts) and the policy says so on read.
 */
export async function removeTargetEverywhere(db: Executor, context: AuditContext, organizationId: string, target: Target): Promise<void> {
  for (const policy of await policiesTargeting(db, organizationId, target)) {
    const before = storedSteps(policy.steps)
    const after = before.map((step) => ({ ...step, targets: step.targets.filter((t) => !(t.type === target.type && t.id === target.id)) }))
    await updatePolicy(db, organizationId, policy.id, { steps: after })
    await recordAudit(db, context, {
      organizationId,
      product: 'alerting',
      entityType: 'escalation_policy',
      entityId: policy.id,
      action: 'escalation_policy.target_removed',
      before: { target, steps: before },
      after: { steps: after, problems: policyProblems(after) },
    })
  }
}
