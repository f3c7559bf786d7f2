import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { chatIntegrationsAmong, outboundWebhooksAmong, slackAppsAmong, trackersAmong } from '../destinations/index.js'
import { fieldKeysOf, severitiesOf } from '../incidents/index.js'
import { activeMembersAmong, policiesAmong, schedulesAmong, teamsAmong } from '../oncall/index.js'
import { isIncidentTrigger, type Action, type Condition, type Trigger } from './schemas.js'
import { templateProblem } from './templates.js'

/** What a trigger's runs are about. */
export type SubjectKind = 'alert' | 'deploy' | 'incident'
export const subjectKindOf = (trigger: Trigger): SubjectKind =>
  trigger === 'deploy.recorded' ? 'deploy' : isIncidentTrigger(trigger) ? 'incident' : 'alert'

/** The subjects each condition and action applies to. */
const CONDITION_SUBJECTS: Record<Condition['type'], SubjectKind[]> = {
  priority: ['alert'],
  source: ['alert'],
  deploy_recent: ['alert'],
  labels: ['alert', 'incident'],
  service: ['alert', 'deploy', 'incident'],
  environment: ['deploy'],
  deploy_status: ['deploy'],
  incident_type: ['incident'],
  severity: ['incident'],
  field: ['incident'],
}
const ACTION_SUBJECTS: Record<Action['type'], SubjectKind[]> = {
  notify_chat: ['alert', 'deploy', 'incident'],
  call_webhook: ['alert', 'deploy', 'incident'],
  set_priority: ['alert'],
  start_analysis: ['alert'],
  escalate: ['alert'],
  open_command_room: ['alert'],
  update_status_page: ['alert'],
  request_responders: ['incident'],
  set_field: ['incident'],
  create_ticket: ['incident'],
  create_incident_channel: ['incident'],
  post_status_update: ['incident'],
  create_rca: ['incident'],
}
const triggersOf = (subjects: SubjectKind[]) =>
  subjects.map((subject) => ({ alert: 'alert triggers', deploy: 'deploy.recorded', incident: 'incident triggers' })[subject]).join(' and ')

interface References {
  chat: Set<string>
  slackApps: Set<string>
  webhooks: Set<string>
  policies: Set<string>
  users: Set<string>
  teams: Set<string>
  schedules: Set<string>
  fields: Set<string>
  trackers: Set<string>
  /** The organization's severity keys. */
  severities: Set<string>
}

const TARGET_NOUNS = { user: 'an active member', team: 'a team', schedule: 'a schedule', escalation_policy: 'an escalation policy' }

/** Which of the ids the actions name exist in the organization, read once for many workflows. */
export async function referencesOf(db: Executor, organizationId: string, actionLists: Action[][]): Promise<References> {
  const chat: string[] = []
  const webhooks: string[] = []
  const policies: string[] = []
  const targets = { user: [] as string[], team: [] as string[], schedule: [] as string[] }
  let setsFields = false
  const trackers: string[] = []
  for (const action of actionLists.flat()) {
    if (action.type === 'notify_chat' || action.type === 'create_incident_channel') chat.push(action.chatIntegrationId)
    if (action.type === 'call_webhook') webhooks.push(action.outboundWebhookId)
    if (action.type === 'escalate') policies.push(action.escalationPolicyId)
    if (action.type === 'set_field') setsFields = true
    if (action.type === 'create_ticket') trackers.push(action.trackerId)
    if (action.type === 'request_responders')
      for (const target of action.targets)
        if (target.type === 'escalation_policy') policies.push(target.id)
        else targets[target.type].push(target.id)
  }
  const unique = (ids: string[]) => [...new Set(ids)]
  // One after the other: the executor may be a transaction.
  const chatFound = await chatIntegrationsAmong(db, organizationId, unique(chat))
  const slackApps = await slackAppsAmong(db, organizationId, [...chatFound])
  const webhooksFound = await outboundWebhooksAmong(db, organizationId, unique(webhooks))
  const policiesFound = await policiesAmong(db, organizationId, unique(policies))
  const users = targets.user.length > 0 ? await activeMembersAmong(db, organizationId, unique(targets.user)) : new Set<string>()
  const teams = targets.team.length > 0 ? await teamsAmong(db, organizationId, unique(targets.team)) : new Set<string>()
  const schedules = targets.schedule.length > 0 ? await schedulesAmong(db, organizationId, unique(targets.schedule)) : new Set<string>()
  const fields = setsFields ? new Set(await fieldKeysOf(db, organizationId)) : new Set<string>()
  const trackersFound = await trackersAmong(db, organizationId, unique(trackers))
  const severities = new Set((await severitiesOf(db, organizationId)).map((severity) => severity.key))
  return {
    chat: chatFound,
    slackApps,
    webhooks: webhooksFound,
    policies: policiesFound,
    users,
    teams,
    schedules,
    fields,
    trackers: trackersFound,
    severities,
  }
}

/** The action's words that are templates, by field. */
function templatesOf(action: Action): Record<string, string> {
  switch (action.type) {
    case 'notify_chat':
      return action.message ? { message: action.message } : {}
    case 'post_status_update':
      return { body: action.body, ...(action.title ? { title: action.title } : {}) }
    case 'create_rca':
      return action.title ? { title: action.title } : {}
    default:
      return {}
  }
}

/** Why an action cannot run as things stand (its target was deleted), with the field that names it. */
function missingReference(action: Action, references: References): { field: string; message: string } | undefined {
  if ((action.type === 'notify_chat' || action.type === 'create_incident_channel') && !references.chat.has(action.chatIntegrationId))
    return { field: 'chatIntegrationId', message: 'is not a chat integration of this organization' }
  const needsSlackApp = action.type === 'create_incident_channel' || (action.type === 'notify_chat' && action.channel === 'incident')
  if (needsSlackApp && !references.slackApps.has(action.chatIntegrationId))
    return {
      field: 'chatIntegrationId',
      message: 'is not a Slack app with a signing secret (only those keep incident channels)',
    }
  if (action.type === 'call_webhook' && !references.webhooks.has(action.outboundWebhookId))
    return { field: 'outboundWebhookId', message: 'is not an outbound webhook of this organization' }
  if (action.type === 'escalate' && !references.policies.has(action.escalationPolicyId))
    return { field: 'escalationPolicyId', message: 'is not an escalation policy of this organization' }
  if (action.type === 'create_ticket' && !references.trackers.has(action.trackerId))
    return { field: 'trackerId', message: 'is not a tracker of this organization' }
  if (action.type === 'set_field' && !references.fields.has(action.field))
    return { field: 'field', message: 'is not a custom incident field of this organization' }
  if (action.type === 'request_responders') {
    const known = { user: references.users, team: references.teams, schedule: references.schedules, escalation_policy: references.policies }
    const index = action.targets.findIndex((target) => !known[target.type].has(target.id))
    if (index >= 0)
      return { field: `targets/${index}/id`, message: `is not ${TARGET_NOUNS[action.targets[index]!.type]} of this organization` }
  }
  return undefined
}

/** A severity condition's keys the organization does not have. */
const unknownSeverities = (condition: Condition, references: References) =>
  condition.type === 'severity' ? condition.in.filter((key) => !references.severities.has(key)) : []

/** A stored workflow's actions whose targets are gone, and severities the organization dropped: what its reader is told. */
export function problemsOf(actions: Action[], references: References, conditions: Condition[] = []): string[] {
  return [
    ...conditions.flatMap((condition, index) => {
      const unknown = unknownSeverities(condition, references)
      return unknown.length > 0 ? [`conditions/${index}/in names ${unknown.join(', ')}, no longer a severity: it never holds for them`] : []
    }),
    ...actions.flatMap((action, index) => {
      const missing = missingReference(action, references)
      return missing ? [`actions/${index}/${missing.field} ${missing.message} (it was deleted): the action fails`] : []
    }),
  ]
}

/**
 * Refuses a workflow that could not run as written (400 naming the field): conditions and
 * actions about another subject than its trigger's (alerts, deploys, incidents), and targets
 * that are not the organization's.
 */
export async function checkWorkflow(
  db: Executor,
  organizationId: string,
  workflow: { trigger: Trigger; conditions: Condition[]; actions: Action[] },
): Promise<void> {
  const subject = subjectKindOf(workflow.trigger)
  workflow.conditions.forEach((condition, index) => {
    const fits = CONDITION_SUBJECTS[condition.type]
    if (!fits.includes(subject))
      throw invalidField(`conditions/${index}/type`, `${condition.type} applies to ${triggersOf(fits)}, not ${workflow.trigger}`)
  })
  workflow.actions.forEach((action, index) => {
    const fits = ACTION_SUBJECTS[action.type]
    if (!fits.includes(subject))
      throw invalidField(`actions/${index}/type`, `${action.type} acts on ${triggersOf(fits)}, not ${workflow.trigger}`)
  })
  workflow.actions.forEach((action, index) => {
    if (action.type === 'notify_chat' && subject !== 'incident') {
      const extra = (['channel', 'message'] as const).find((field) => action[field] !== undefined)
      if (extra) throw invalidField(`actions/${index}/${extra}`, `applies to incident triggers, not ${workflow.trigger}`)
    }
    for (const [field, template] of Object.entries(templatesOf(action))) {
      const problem = templateProblem(template)
      if (problem) throw invalidField(`actions/${index}/${field}`, problem)
    }
  })
  const references = await referencesOf(db, organizationId, [workflow.actions])
  workflow.actions.forEach((action, index) => {
    const missing = missingReference(action, references)
    if (missing) throw invalidField(`actions/${index}/${missing.field}`, missing.message)
  })
  workflow.conditions.forEach((condition, index) => {
    const unknown = unknownSeverities(condition, references)
    if (unknown.length > 0)
      throw invalidField(
        `conditions/${index}/in`,
        `names ${unknown.join(', ')}: not a severity of this organization (GET …/incident-severities)`,
      )
  })
}
