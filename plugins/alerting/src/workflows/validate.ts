import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { chatIntegrationsAmong, outboundWebhooksAmong } from '../destinations/index.js'
import { policiesAmong } from '../oncall/index.js'
import type { Action, Condition, Trigger } from './schemas.js'

const ALERT_ONLY_CONDITIONS = new Set<Condition['type']>(['priority', 'source', 'labels', 'deploy_recent'])
const DEPLOY_ONLY_CONDITIONS = new Set<Condition['type']>(['environment', 'deploy_status'])
const ALERT_ONLY_ACTIONS = new Set<Action['type']>([
  'set_priority',
  'start_analysis',
  'escalate',
  'open_command_room',
  'update_status_page',
])

interface References {
  chat: Set<string>
  webhooks: Set<string>
  policies: Set<string>
}

/** Which of the ids the actions name exist in the organization, read once for many workflows. */
export async function referencesOf(db: Executor, organizationId: string, actionLists: Action[][]): Promise<References> {
  const chat: string[] = []
  const webhooks: string[] = []
  const policies: string[] = []
  for (const action of actionLists.flat()) {
    if (action.type === 'notify_chat') chat.push(action.chatIntegrationId)
    if (action.type === 'call_webhook') webhooks.push(action.outboundWebhookId)
    if (action.type === 'escalate') policies.push(action.escalationPolicyId)
  }
  const [chatFound, webhooksFound, policiesFound] = await Promise.all([
    chatIntegrationsAmong(db, organizationId, [...new Set(chat)]),
    outboundWebhooksAmong(db, organizationId, [...new Set(webhooks)]),
    policiesAmong(db, organizationId, [...new Set(policies)]),
  ])
  return { chat: chatFound, webhooks: webhooksFound, policies: policiesFound }
}

/** Why an action cannot run as things stand (its target was deleted), with the field that names it. */
function missingReference(action: Action, references: References): { field: string; message: string } | undefined {
  if (action.type === 'notify_chat' && !references.chat.has(action.chatIntegrationId))
    return { field: 'chatIntegrationId', message: 'is not a chat integration of this organization' }
  if (action.type === 'call_webhook' && !references.webhooks.has(action.outboundWebhookId))
    return { field: 'outboundWebhookId', message: 'is not an outbound webhook of this organization' }
  if (action.type === 'escalate' && !references.policies.has(action.escalationPolicyId))
    return { field: 'escalationPolicyId', message: 'is not an escalation policy of this organization' }
  return undefined
}

/** A stored workflow's actions whose targets are gone: what its reader is told. */
export function problemsOf(actions: Action[], references: References): string[] {
  return actions.flatMap((action, index) => {
    const missing = missingReference(action, references)
    return missing ? [`actions/${index}/${missing.field} ${missing.message} (it was deleted): the action fails`] : []
  })
}

/**
 * Refuses a workflow that could not run as written (400 naming the field): conditions and
 * actions about alerts on `deploy.recorded` and the reverse, and targets that are not the
 * organization's.
 */
export async function checkWorkflow(
  db: Executor,
  organizationId: string,
  workflow: { trigger: Trigger; conditions: Condition[]; actions: Action[] },
): Promise<void> {
  const onDeploys = workflow.trigger === 'deploy.recorded'
  workflow.conditions.forEach((condition, index) => {
    if (onDeploys && ALERT_ONLY_CONDITIONS.has(condition.type))
      throw invalidField(`conditions/${index}/type`, `${condition.type} applies to alert triggers, not deploy.recorded`)
    if (!onDeploys && DEPLOY_ONLY_CONDITIONS.has(condition.type))
      throw invalidField(`conditions/${index}/type`, `${condition.type} applies to deploy.recorded only`)
  })
  workflow.actions.forEach((action, index) => {
    if (onDeploys && ALERT_ONLY_ACTIONS.has(action.type))
      throw invalidField(`actions/${index}/type`, `${action.type} acts on an alert: not possible on deploy.recorded`)
  })
  const references = await referencesOf(db, organizationId, [workflow.actions])
  workflow.actions.forEach((action, index) => {
    const missing = missingReference(action, references)
    if (missing) throw invalidField(`actions/${index}/${missing.field}`, missing.message)
  })
}
