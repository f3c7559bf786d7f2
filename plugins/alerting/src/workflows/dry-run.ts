import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { findAlert } from '../alerts/index.js'
import { findChatIntegration, findOutboundWebhook, findTracker } from '../destinations/index.js'
import { findIncident } from '../incidents/index.js'
import { incidentChannel } from '../chat/index.js'
import { findDeployEvent } from '../intake/index.js'
import { emailsOf, findPolicy } from '../oncall/index.js'
import { evaluateConditions, type Subject } from './conditions.js'
import { ranForIncident } from './queries.js'
import type { Action, Condition, ConditionOutcome, Trigger } from './schemas.js'
import { subjectKindOf } from './validate.js'

// What a workflow would do for a given alert, deploy or incident, as it stands now, without doing
// any of it (decision 0031, "Dry run"): its conditions evaluated as a run would, and each action
// described with what it names, or why it would fail.

/** A run's id no run has: a dry run is no run, so every earlier one counts for "once per incident". */
const NO_RUN = '00000000-0000-0000-0000-000000000000'

export interface DryRunSubject {
  alertId?: string
  deployEventId?: string
  incidentId?: string
}

/** The subject the request names, of the kind the trigger acts on (400 otherwise; 400 when it is not the organization's). */
async function subjectOf(db: Executor, organizationId: string, trigger: Trigger, given: DryRunSubject): Promise<Subject> {
  const wanted = subjectKindOf(trigger)
  const field = { alert: 'alertId', deploy: 'deployEventId', incident: 'incidentId' }[wanted]
  const id = { alert: given.alertId, deploy: given.deployEventId, incident: given.incidentId }[wanted]
  if (!id) throw invalidField(field, `is what ${trigger} workflows run on: name one`)
  const subject =
    wanted === 'alert'
      ? await findAlert(db, organizationId, id).then((alert) => alert && ({ kind: 'alert', alert } as const))
      : wanted === 'deploy'
        ? await findDeployEvent(db, organizationId, id).then((deploy) => deploy && ({ kind: 'deploy', deploy } as const))
        : await findIncident(db, organizationId, id).then((incident) => incident && ({ kind: 'incident', incident } as const))
  if (!subject)
    throw invalidField(
      field,
      `is not ${wanted === 'incident' ? 'an incident' : `a${wanted === 'alert' ? 'n alert' : ' deploy'}`} of the organization`,
    )
  return subject
}

/** What one action would do, in words, or why it would fail. */
async function describe(
  db: Executor,
  organizationId: string,
  action: Action,
  subject: Subject,
): Promise<{ wouldFail: boolean; detail: string }> {
  const would = (detail: string) => ({ wouldFail: false, detail })
  const fail = (detail: string) => ({ wouldFail: true, detail })
  switch (action.type) {
    case 'notify_chat': {
      const integration = await findChatIntegration(db, organizationId, action.chatIntegrationId)
      if (!integration) return fail('the chat integration was deleted')
      if (!integration.enabled) return fail(`the chat integration "${integration.name}" is disabled`)
      if (action.channel !== 'incident' || subject.kind !== 'incident') return would(`post to "${integration.name}"`)
      const room = await incidentChannel(db, integration.id, subject.incident.id)
      return room
        ? would(`post to #${room.name} in "${integration.name}"`)
        : would(`post to INC-${subject.incident.number}'s channel in "${integration.name}", once it has one (it has none now)`)
    }
    case 'create_incident_channel': {
      const integration = await findChatIntegration(db, organizationId, action.chatIntegrationId)
      if (!integration) return fail('the chat integration was deleted')
      if (!integration.enabled) return fail(`the chat integration "${integration.name}" is disabled`)
      const room = subject.kind === 'incident' ? await incidentChannel(db, integration.id, subject.incident.id) : undefined
      return would(room ? `nothing: the incident has its channel #${room.name}` : `open the incident’s channel in "${integration.name}"`)
    }
    case 'post_status_update':
      return would(
        `post a ${action.status ?? 'investigating'} update to the timeline and, ${action.publish ? 'published' : 'as a draft'}, to the status pages following the incident’s services`,
      )
    case 'create_rca':
      return would('draft an RCA document linked to the incident, unless one is linked already')
    case 'call_webhook': {
      const webhook = await findOutboundWebhook(db, organizationId, action.outboundWebhookId)
      if (!webhook) return fail('the outbound webhook was deleted')
      return webhook.enabled
        ? would(`send the event to "${webhook.name}", signed`)
        : fail(`the outbound webhook "${webhook.name}" is disabled`)
    }
    case 'escalate': {
      const policy = await findPolicy(db, organizationId, action.escalationPolicyId)
      return policy
        ? would(`escalate the alert with "${policy.name}", unless it is escalating already`)
        : fail('the escalation policy was deleted')
    }
    case 'request_responders': {
      const names: string[] = []
      const emails = await emailsOf(
        db,
        action.targets.filter((target) => target.type === 'user').map((target) => target.id),
      )
      for (const target of action.targets) {
        if (target.type === 'escalation_policy') {
          const policy = await findPolicy(db, organizationId, target.id)
          if (!policy) return fail(`the escalation policy ${target.id} was deleted`)
          names.push(`the escalation policy "${policy.name}"`)
        } else if (target.type === 'user') names.push(emails.get(target.id) ?? `the member ${target.id}`)
        else names.push(`the ${target.type} ${target.id}`)
      }
      return would(`page ${names.join(', ')} about the incident, unless asked already`)
    }
    case 'create_ticket': {
      const tracker = await findTracker(db, organizationId, action.trackerId)
      if (!tracker) return fail('the tracker was disconnected')
      if (!tracker.enabled) return fail(`the tracker "${tracker.name}" is disabled`)
      const title =
        action.title ??
        (subject.kind === 'incident' ? `INC-${subject.incident.number}: ${subject.incident.title}` : 'the incident’s reference and title')
      return would(`add a follow-up "${title}" with a ticket in "${tracker.name}" (${tracker.kind}, ${tracker.project})`)
    }
    case 'set_field':
      return would(`set the field ${action.field} to ${JSON.stringify(action.value ?? null)}, checked as the incident API checks it`)
    case 'set_priority':
      return subject.kind === 'alert' && subject.alert.priority === action.priority
        ? would(`nothing: the alert is ${action.priority} already`)
        : would(`change the alert’s priority to ${action.priority}`)
    case 'start_analysis':
      return would('ask for an analysis of the alert, within the usage budget')
    case 'open_command_room':
      return would('open the alert’s command room')
    case 'update_status_page':
      return would(`open or update a ${action.publish ? 'published' : 'draft'} incident on the status pages following the alert’s service`)
  }
}

/** The conditions' outcomes and the actions' descriptions for the subject, as things are now. */
export async function dryRun(
  db: Executor,
  organizationId: string,
  workflow: { id: string; trigger: Trigger; conditions: Condition[]; actions: Action[]; oncePerIncident: boolean },
  given: DryRunSubject,
) {
  const subject = await subjectOf(db, organizationId, workflow.trigger, given)
  const conditions: ConditionOutcome[] = await evaluateConditions(db, organizationId, workflow.conditions, subject, new Date())
  if (subject.kind === 'incident' && workflow.oncePerIncident) {
    const ran = await ranForIncident(db, organizationId, workflow.id, subject.incident.id, NO_RUN)
    conditions.push({
      type: 'once_per_incident',
      matched: !ran,
      detail: ran ? `it acted on INC-${subject.incident.number} already` : `first time for INC-${subject.incident.number}`,
    })
  }
  const actions = []
  for (const action of workflow.actions) actions.push({ type: action.type, ...(await describe(db, organizationId, action, subject)) })
  return { wouldAct: conditions.every((condition) => condition.matched), conditions, actions }
}
