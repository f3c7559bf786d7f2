import type { FastifyBaseLogger } from 'fastify'
import { jsonColumn, type Database, type Executor } from '@svc/db'
import { publish, subscribe, type AlertPriority, type DeployRecorded } from '@svc/events'
import { ensureQueue, inTransaction, workEach, type JobQueue } from '@svc/jobs'
import { lockUntilCommit } from '@svc/db'
import {
  addFollowUp,
  editIncident,
  fieldValue,
  findIncident,
  findTimelineEntry,
  fullIncidentBody,
  type IncidentChange,
  type IncidentChangeSubscriber,
  type IncidentRow,
  type LatestAnalysisReader,
  incidentRoles,
  postStatusUpdate,
  shownFieldsOf,
} from '../incidents/index.js'
import { chatAlertOf, incidentChannel, incidentChannelRequested, requestIncidentChannel } from '../chat/index.js'
import {
  alertPayload,
  type ChatDeploy,
  ChatFailure,
  type ChatIncident,
  type ChatSender,
  findChatIntegration,
  findOutboundWebhook,
  type OutboundEvent,
  type WebhookDelivery,
} from '../destinations/index.js'
import { type Escalator, requestResponders } from '../paging/index.js'
import { type AlertRow, findAlert, openCommandRoom, recordAlertEvent, setAlertPriority, URGENT_PRIORITIES } from '../alerts/index.js'
import { findDeployEvent } from '../intake/index.js'
import { findPolicy, withCatalogNames } from '../oncall/index.js'
import {
  enabledWorkflows,
  findWorkflow,
  finishRun,
  insertRuns,
  recordActionOutcomes,
  startRun,
  storedActionOutcomes,
  storedActions,
  storedConditions,
  ranForIncident,
  takeRun,
  type RunRow,
} from './queries.js'
import { deployPayload, incidentPayload } from './payloads.js'
import { evaluateConditions, type Subject } from './conditions.js'
import type { Action, ActionOutcome, Condition, IncidentTrigger, Trigger } from './schemas.js'
import { renderTemplate, type TemplateView } from './templates.js'

/** An organization's enabled workflows of a trigger, by `organizationId trigger`, as one batch of events has read them. */
export type KnownWorkflows = Map<string, Awaited<ReturnType<typeof enabledWorkflows>>>

/** One job per run: `{ runId }`. */
export const WORKFLOW_QUEUE = 'alerting.workflow-run'
/** Alerting's copy of `deploy.recorded` events, which queue the runs of deploy workflows. */
export const DEPLOY_RECORDED_QUEUE = 'alerting.deploy-recorded'
/** Retries of a run whose chat post may succeed later (5xx, 429, no connection), with backoff. */
const RETRY_LIMIT = 4

interface RunJob {
  runId: string
}

/** What the insights surface answers when a workflow asks for an analysis (the product service wires it in). */
export type AnalysisStart =
  | { outcome: 'requested'; analysis: { id: string } }
  | { outcome: 'already_active'; analysisId: string | null }
  | { outcome: 'already_analyzed' }
  | { outcome: 'budget_exceeded'; limit: string }
export type AnalysisStarter = (incident: { organizationId: string; alertId: string }) => Promise<AnalysisStart>

/** The insights surface's RCA for an incident, in the caller's transaction: a new draft, or the one linked already. */
export type RcaOpener = (
  trx: Executor,
  request: { organizationId: string; incidentId: string; title: string },
) => Promise<{ created: boolean; id: string; title: string }>

export interface WorkflowRunnerDeps {
  database: Database
  jobs: JobQueue
  log: FastifyBaseLogger
  sender: ChatSender
  latestAnalysis: LatestAnalysisReader
  productUrl: string
  webhooks: WebhookDelivery
  escalator: Pick<Escalator, 'escalateWith' | 'pageTargets' | 'afterCommit'>
  startAnalysis: AnalysisStarter
  openRca: RcaOpener
}

/** The workflow as its run follows it, kept on the run so later edits do not change what it did. */
interface Definition {
  name: string
  conditions: Condition[]
  actions: Action[]
  oncePerIncident?: boolean
}

/** A run's stored definition: the workflow as it was when the run began. */
const storedDefinition = jsonColumn<Definition>()

interface RunContext {
  run: RunRow
  definition: Definition
  subject: Subject
}

export type WorkflowRunner = ReturnType<typeof createWorkflowRunner>

const succeeded = (detail: string): ActionOutcome => ({ type: '', status: 'succeeded', detail })
const skipped = (detail: string): ActionOutcome => ({ type: '', status: 'skipped', detail })
const failed = (detail: string): ActionOutcome => ({ type: '', status: 'failed', detail })

/** A run's event key for an incident change: the prefix, then the change's timeline row id. */
const INCIDENT_CHANGE_KEY = 'incident-change:'

/** The workflow triggers an incident change is: a resolution is a status change too. */
function triggersOfChange(change: IncidentChange): IncidentTrigger[] {
  switch (change.kind) {
    case 'opened':
    case 'declared':
      return ['incident.declared']
    case 'status_changed':
      return change.data.to === 'resolved' ? ['incident.status_changed', 'incident.resolved'] : ['incident.status_changed']
    case 'severity_changed':
      return ['incident.severity_changed']
    case 'field_changed':
      return ['incident.field_changed']
    case 'role_assigned':
      return ['incident.role_assigned']
    default:
      return []
  }
}

/** A chat post that may succeed on a later try of the run. */
class RetryLater extends Error {}

/**
 * Runs workflows (docs/decisions/0014-on-call.md, "Workflows"). A triggering event queues one
 * run per enabled workflow of its trigger, in the transaction that claims the event; each run
 * is a pg-boss job that evaluates the conditions once, then runs the actions in order, each
 * outcome recorded as it completes. A retried run resumes at the first action without an
 * outcome, so no action that touched the database runs twice.
 */
export function createWorkflowRunner(deps: WorkflowRunnerDeps) {
  const { database, jobs, log } = deps
  const { db } = database
  let worker: string | undefined
  let deployWorker: string | undefined

  async function subjectOf(executor: Executor, run: RunRow): Promise<Subject | undefined> {
    if (run.alertId) {
      const alert = await findAlert(executor, run.organizationId, run.alertId)
      return alert && { kind: 'alert', alert }
    }
    if (run.deployEventId) {
      const deploy = await findDeployEvent(executor, run.organizationId, run.deployEventId)
      return deploy && { kind: 'deploy', deploy }
    }
    if (run.incidentId) {
      const incident = await findIncident(executor, run.organizationId, run.incidentId)
      if (!incident) return undefined
      const entryId = run.eventKey.startsWith(INCIDENT_CHANGE_KEY) ? run.eventKey.slice(INCIDENT_CHANGE_KEY.length) : undefined
      const change = entryId && (await findTimelineEntry(executor, run.organizationId, incident.id, entryId))
      return {
        kind: 'incident',
        incident,
        ...(change ? { change: { kind: change.kind, data: change.data as Record<string, unknown> } } : {}),
      }
    }
    return undefined
  }

  /** Evaluates the run's conditions (once); answers what is left to do, or undefined when nothing is. */
  async function begin(runId: string): Promise<RunContext | undefined> {
    return db.transaction().execute(async (trx) => {
      const run = await takeRun(trx, runId)
      if (!run || (run.status !== 'queued' && run.status !== 'running')) return undefined
      const subject = await subjectOf(trx, run)
      if (run.status === 'running') return subject && { run, definition: storedDefinition(run.definition), subject }
      const workflow = await findWorkflow(trx, run.organizationId, run.workflowId)
      if (!workflow) return undefined
      const definition: Definition = {
        name: workflow.name,
        conditions: storedConditions(workflow.conditions),
        actions: storedActions(workflow.actions),
        oncePerIncident: workflow.oncePerIncident,
      }
      if (run.startsAt && !workflow.enabled) {
        const conditions = [{ type: 'enabled', matched: false, detail: 'the workflow was disabled while the run waited out its delay' }]
        await startRun(trx, run.id, { definition, conditions, matched: false })
        return undefined
      }
      // After a delay the conditions look at the incident as it is then, not at what the change set.
      const judged = subject?.kind === 'incident' && run.startsAt ? { kind: subject.kind, incident: subject.incident } : subject
      const conditions = judged
        ? await evaluateConditions(trx, run.organizationId, definition.conditions, judged, run.occurredAt)
        : [{ type: 'subject', matched: false, detail: 'the alert, deploy or incident no longer exists' }]
      if (subject?.kind === 'incident' && workflow.oncePerIncident && conditions.every((condition) => condition.matched)) {
        // Two changes of one incident may begin runs of the workflow at once: one acts.
        await lockUntilCommit(trx, `workflow-incident:${workflow.id}:${subject.incident.id}`)
        const ran = await ranForIncident(trx, run.organizationId, workflow.id, subject.incident.id, run.id)
        conditions.push({
          type: 'once_per_incident',
          matched: !ran,
          detail: ran ? `it acted on INC-${subject.incident.number} already` : `first time for INC-${subject.incident.number}`,
        })
      }
      const matched = conditions.every((condition) => condition.matched)
      await startRun(trx, run.id, { definition, conditions, matched })
      return matched && subject ? { run, definition, subject } : undefined
    })
  }

  /**
   * Appends an action's outcome, with the run locked, unless another try of the run recorded
   * this action first; `outcome` runs only then, in the same transaction.
   */
  async function record(runId: string, index: number, outcome: (trx: Executor) => Promise<ActionOutcome>): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const run = await takeRun(trx, runId)
      const outcomes = storedActionOutcomes(run?.actions ?? [])
      if (!run || outcomes.length !== index) return
      await recordActionOutcomes(trx, runId, [...outcomes, await outcome(trx)])
    })
  }

  /** The words a template may name, for the incident as it is now. */
  async function templateViewOf(executor: Executor, context: RunContext, incident: IncidentRow): Promise<TemplateView> {
    const organizationId = context.run.organizationId
    const shown = await shownFieldsOf(executor, organizationId, incident)
    return {
      incident: {
        reference: `INC-${incident.number}`,
        title: incident.title,
        severity: incident.severity,
        status: incident.status,
        type: shown.type ?? '',
        summary: incident.summary ?? '',
        url: `${deps.productUrl}/api/v1/organizations/${organizationId}/incidents/${incident.id}`,
      },
      fields: Object.fromEntries(shown.fields.map((field) => [field.key, field.value])),
      workflow: { name: context.definition.name },
    }
  }

  /** The incident's card for a chat, with the workflow's words above it. */
  async function chatIncidentOf(context: RunContext, incidentId: string, message: string | undefined) {
    const incident = await findIncident(db, context.run.organizationId, incidentId)
    if (!incident) return undefined
    const view = await templateViewOf(db, context, incident)
    const roles = await incidentRoles(db, context.run.organizationId, incident.id)
    const commander = roles.find((role) => role.role === 'commander')?.email ?? null
    return {
      incident: { ...view.incident, type: view.incident.type || null, commander },
      url: view.incident.url,
      ...(message ? { text: renderTemplate(message, view) } : {}),
      reason: `Workflow "${context.definition.name}"`,
    } satisfies ChatIncident
  }

  async function notifyChat(
    context: RunContext,
    action: Extract<Action, { type: 'notify_chat' }>,
    retryCount: number,
  ): Promise<ActionOutcome> {
    const { run, subject, definition } = context
    const integration = await findChatIntegration(db, run.organizationId, action.chatIntegrationId)
    if (!integration) return failed('the chat integration was deleted')
    if (!integration.enabled) return failed(`the chat integration "${integration.name}" is disabled`)
    const reason = `Workflow "${definition.name}"`
    if (subject.kind === 'incident') return notifyChatOfIncident(context, subject.incident.id, integration, action, retryCount)
    const message =
      subject.kind === 'alert'
        ? // The alert as it is now: an earlier action may have changed its priority.
          await chatAlertOf(
            db,
            deps,
            run.organizationId,
            (await findAlert(db, run.organizationId, subject.alert.id)) ?? subject.alert,
            reason,
          )
        : ({
            deploy: subject.deploy,
            url: subject.deploy.url ?? `${deps.productUrl}/api/v1/organizations/${run.organizationId}/deploy-events`,
            reason,
          } satisfies ChatDeploy)
    return sendToChat(() => deps.sender.send(integration, message), `posted to "${integration.name}"`, retryCount)
  }

  /** Sends, answering the outcome; a failure that may pass is tried again with the run, while tries are left. */
  async function sendToChat(send: () => Promise<unknown>, done: string, retryCount: number): Promise<ActionOutcome> {
    try {
      await send()
      return succeeded(done)
    } catch (error) {
      const failure = error instanceof ChatFailure ? error : new ChatFailure((error as Error).message, false)
      if (!failure.permanent && retryCount < RETRY_LIMIT) throw new RetryLater(failure.message)
      return failed(failure.message)
    }
  }

  /**
   * The incident's card, to the integration's channel or to the incident's own channel there. A
   * channel still being opened (the app opens one for every incident, or a workflow asked) is
   * waited for by trying the run again.
   */
  async function notifyChatOfIncident(
    context: RunContext,
    incidentId: string,
    integration: NonNullable<Awaited<ReturnType<typeof findChatIntegration>>>,
    action: Extract<Action, { type: 'notify_chat' }>,
    retryCount: number,
  ): Promise<ActionOutcome> {
    const message = await chatIncidentOf(context, incidentId, action.message)
    if (!message) return failed('the incident no longer exists')
    if (action.channel !== 'incident')
      return sendToChat(
        () => deps.sender.send(integration, message),
        `posted ${message.incident.reference} to "${integration.name}"`,
        retryCount,
      )
    const room = await incidentChannel(db, integration.id, incidentId)
    if (!room) {
      const coming =
        message.incident.status !== 'resolved' &&
        (integration.incidentChannels || (await incidentChannelRequested(db, integration.id, incidentId)))
      if (coming && retryCount < RETRY_LIMIT)
        throw new RetryLater(`${message.incident.reference} has no channel in "${integration.name}" yet`)
      return failed(`${message.incident.reference} has no channel in "${integration.name}" (create_incident_channel opens one)`)
    }
    return sendToChat(
      () => deps.sender.send(integration, message, undefined, room.channelId),
      `posted to #${room.name} in "${integration.name}"`,
      retryCount,
    )
  }

  async function startAnalysis(context: RunContext, alert: AlertRow): Promise<ActionOutcome> {
    const answer = await deps.startAnalysis({ organizationId: context.run.organizationId, alertId: alert.id })
    switch (answer.outcome) {
      case 'requested':
        return succeeded(`analysis ${answer.analysis.id} requested`)
      case 'already_active':
        return skipped('an analysis of the alert is running already')
      case 'already_analyzed':
        return skipped('the alert was analyzed automatically already')
      case 'budget_exceeded':
        return failed(`the organization's ${answer.limit} limit for analyses is reached`)
    }
  }

  /** The actions that change the database, in the transaction that records their outcome. */
  async function actInTransaction(trx: Executor, context: RunContext, action: Action): Promise<ActionOutcome> {
    const { run, subject, definition } = context
    const organizationId = run.organizationId
    const workflow = { id: run.workflowId, name: definition.name, runId: run.id }
    const by = { workflowId: run.workflowId, workflowName: definition.name, runId: run.id }
    if (action.type === 'call_webhook') {
      const webhook = await findOutboundWebhook(trx, organizationId, action.outboundWebhookId)
      if (!webhook) return failed('the outbound webhook was deleted')
      if (!webhook.enabled) return failed(`the outbound webhook "${webhook.name}" is disabled`)
      const trigger = run.trigger as Trigger
      const deliveryId = await deps.webhooks.queue(trx, {
        webhookId: webhook.id,
        organizationId,
        event: trigger,
        alertId: subject.kind === 'alert' ? subject.alert.id : null,
        attemptId: null,
        payload:
          subject.kind === 'alert'
            ? alertPayload(trigger as OutboundEvent, organizationId, subject.alert, { workflow })
            : subject.kind === 'deploy'
              ? deployPayload(organizationId, subject.deploy, { workflow })
              : incidentPayload(trigger, organizationId, await fullIncidentBody(trx, organizationId, subject.incident), { workflow }),
      })
      return succeeded(`delivery ${deliveryId} to "${webhook.name}" queued (its delivery log has the outcome)`)
    }
    if (subject.kind === 'incident') return actOnIncident(trx, context, subject.incident, action)
    if (subject.kind !== 'alert') return failed(`${action.type} acts on an alert: not possible on deploy.recorded`)
    const { alert } = subject
    switch (action.type) {
      case 'set_priority': {
        const before = await setAlertPriority(trx, organizationId, alert.id, action.priority)
        if (!before) return skipped(`the alert is ${action.priority} already`)
        await recordAlertEvent(trx, organizationId, alert.id, 'priority_changed', { from: before, to: action.priority, ...by })
        return succeeded(`priority changed from ${before} to ${action.priority}`)
      }
      case 'open_command_room': {
        const current = await findAlert(trx, organizationId, alert.id)
        if (current && URGENT_PRIORITIES.has(current.priority)) return skipped(`the alert is ${current.priority}: it has its command room`)
        if (!(await openCommandRoom(trx, organizationId, alert.id))) return skipped('the command room was open already')
        await recordAlertEvent(trx, organizationId, alert.id, 'command_room_opened', by)
        return succeeded('command room opened')
      }
      case 'escalate': {
        const policy = await findPolicy(trx, organizationId, action.escalationPolicyId)
        if (!policy) return failed('the escalation policy was deleted')
        // The alert as it is now: an earlier action or a person may have changed it since the event.
        const current = await findAlert(trx, organizationId, alert.id)
        if (!current) return failed('the alert no longer exists')
        const started = await deps.escalator.escalateWith(trx, { ...current, organizationId }, policy.id)
        return started.started ? succeeded(`escalating with "${policy.name}"`) : skipped(started.detail)
      }
      case 'update_status_page': {
        const current = (await findAlert(trx, organizationId, alert.id)) ?? alert
        if (!current.service) return skipped('the alert names no service: no status page component is linked to it')
        await publish(deps.jobs, trx, 'statuspage.update_requested', {
          organizationId,
          alertId: alert.id,
          workflowId: run.workflowId,
          workflowName: definition.name,
          trigger: run.trigger as 'alert.created' | 'alert.acknowledged' | 'alert.resolved',
          alert: { title: current.title, service: current.service, priority: current.priority as AlertPriority },
          services: await withCatalogNames(trx, organizationId, [current.service]),
          componentStatus: action.componentStatus ?? 'major_outage',
          publish: action.publish ?? false,
        })
        return succeeded(`the status pages were asked to follow the alert (components linked to "${current.service}")`)
      }
      default:
        return failed(`${action.type} cannot run here`)
    }
  }

  /** The actions on an incident, in the transaction that records their outcome; the run acts as the system. */
  async function actOnIncident(trx: Executor, context: RunContext, incident: IncidentRow, action: Action): Promise<ActionOutcome> {
    const { run, definition } = context
    const organizationId = run.organizationId
    const actor = { userId: null, audit: { actor: { type: 'system' as const } } }
    const reference = `INC-${incident.number}`
    switch (action.type) {
      case 'request_responders': {
        try {
          const requests = await requestResponders(
            trx,
            deps.escalator,
            actor,
            organizationId,
            incident.id,
            { targets: action.targets, message: action.message ?? `Workflow "${definition.name}"`, reason: 'requested' },
            (index) => `targets/${index}`,
          )
          return requests.length > 0
            ? succeeded(`${requests.length} responder request(s) paged about ${reference}`)
            : skipped(`every target was asked about ${reference} already`)
        } catch (error) {
          // What the API would refuse (a resolved incident, a target gone, too many requests): the outcome says why.
          if ((error as { statusCode?: number }).statusCode) return failed((error as Error).message)
          throw error
        }
      }
      case 'create_ticket': {
        const followUp = await addFollowUp(trx, deps.jobs, actor, organizationId, incident.id, {
          title: action.title ?? `${reference}: ${incident.title}`,
          description: `Opened by the workflow "${definition.name}".`,
          trackerId: action.trackerId,
        }).catch((error: unknown) => {
          if ((error as { statusCode?: number }).statusCode) return (error as Error).message
          throw error
        })
        return typeof followUp === 'string'
          ? failed(followUp)
          : succeeded(`follow-up ${followUp.id} added; its ticket is being created (the follow-up shows it)`)
      }
      case 'create_incident_channel': {
        const integration = await findChatIntegration(trx, organizationId, action.chatIntegrationId)
        if (!integration) return failed('the chat integration was deleted')
        if (!integration.enabled) return failed(`the chat integration "${integration.name}" is disabled`)
        if (incident.status === 'resolved') return skipped(`${reference} is resolved: no channel is opened for it`)
        const room = await incidentChannel(trx, integration.id, incident.id)
        if (room) return skipped(`${reference} has its channel #${room.name} in "${integration.name}"`)
        const asked = await requestIncidentChannel(trx, { organizationId, incidentId: incident.id, integrationId: integration.id })
        return asked
          ? succeeded(`"${integration.name}" opens ${reference}'s channel within seconds`)
          : skipped(`${reference}'s channel in "${integration.name}" was asked for already`)
      }
      case 'post_status_update': {
        const view = await templateViewOf(trx, context, incident)
        const entry = await postStatusUpdate(trx, deps.jobs, actor, organizationId, incident.id, {
          status: action.status ?? 'investigating',
          body: renderTemplate(action.body, view),
          name: action.title ? renderTemplate(action.title, view) : null,
          publish: action.publish ?? false,
        })
        return succeeded(
          `status update ${entry.id} posted to ${reference}; the status pages following its services ${action.publish ? 'publish it' : 'hold it as a draft'}`,
        )
      }
      case 'create_rca': {
        const title = action.title
          ? renderTemplate(action.title, await templateViewOf(trx, context, incident))
          : `${reference}: ${incident.title}`
        const rca = await deps.openRca(trx, { organizationId, incidentId: incident.id, title: title.slice(0, 200) })
        return rca.created
          ? succeeded(`RCA ${rca.id} "${rca.title}" drafted for ${reference}`)
          : skipped(`RCA ${rca.id} "${rca.title}" is linked to ${reference} already`)
      }
      case 'set_field': {
        try {
          const before = incident.fields as Record<string, unknown>
          const after = await editIncident(trx, deps.jobs, actor, organizationId, incident.id, {
            fields: { [action.field]: action.value as never },
          })
          const value = fieldValue(after.fields as Record<string, unknown>, action.field)
          return JSON.stringify(fieldValue(before, action.field) ?? null) === JSON.stringify(value ?? null)
            ? skipped(`${action.field} holds that value already`)
            : succeeded(`${action.field} set to ${JSON.stringify(value ?? null)}`)
        } catch (error) {
          if ((error as { statusCode?: number }).statusCode) return failed((error as Error).message)
          throw error
        }
      }
      default:
        return failed(`${action.type} does not act on incidents`)
    }
  }

  async function runAction(context: RunContext, index: number, action: Action, retryCount: number): Promise<void> {
    const typed = (outcome: ActionOutcome): ActionOutcome => ({ ...outcome, type: action.type })
    if (action.type === 'notify_chat' || action.type === 'start_analysis') {
      // Calls outside the database: never inside a transaction (the embedded database has one connection).
      const outcome =
        action.type === 'notify_chat'
          ? await notifyChat(context, action, retryCount)
          : context.subject.kind === 'alert'
            ? await startAnalysis(context, context.subject.alert)
            : failed('start_analysis acts on an alert: not possible on deploy.recorded')
      return record(context.run.id, index, async () => typed(outcome))
    }
    return record(context.run.id, index, async (trx) => typed(await actInTransaction(trx, context, action)))
  }

  async function run(job: RunJob, attempt: { retryCount: number }): Promise<void> {
    const context = await begin(job.runId)
    if (!context) return
    const { actions } = context.definition
    const done = storedActionOutcomes(context.run.actions).length
    try {
      for (let index = done; index < actions.length; index++) await runAction(context, index, actions[index]!, attempt.retryCount)
    } catch (error) {
      if (error instanceof RetryLater) log.warn({ runId: job.runId, failure: error.message }, 'workflow action will be tried again')
      throw error
    } finally {
      deps.webhooks.wake()
      deps.escalator.afterCommit()
    }
    await finishRun(db, job.runId)
  }

  /**
   * Queues the runs of an event's workflows, in the caller's transaction; answers how many. A
   * caller queueing a batch's events passes one `known` to all of them: each organization's
   * workflows of a trigger are then read once for the batch (a storm is thousands of events of
   * one organization, most of them triggering nothing).
   */
  async function queueRuns(
    trx: Executor,
    organizationId: string,
    event: { trigger: Trigger; eventKey: string; alertId?: string; deployEventId?: string; incidentId?: string; occurredAt: Date },
    known: KnownWorkflows = new Map(),
  ): Promise<number> {
    const key = `${organizationId} ${event.trigger}`
    const workflows = known.get(key) ?? (await enabledWorkflows(trx, organizationId, event.trigger))
    known.set(key, workflows)
    const runs = await insertRuns(trx, organizationId, workflows, event)
    for (const { id: runId, startsAt } of runs)
      await jobs.send(WORKFLOW_QUEUE, { runId } satisfies RunJob, {
        db: inTransaction(trx),
        singletonKey: runId,
        ...(startsAt ? { startAfter: startsAt } : {}),
      })
    return runs.length
  }

  return {
    queueRuns,
    /** Workflows on the incident change bus: each change queues the runs of the triggers it is. */
    incidentSubscriber(): IncidentChangeSubscriber {
      return {
        async handle(trx, changes) {
          let runs = 0
          const known: KnownWorkflows = new Map()
          for (const change of changes)
            for (const trigger of triggersOfChange(change))
              runs += await queueRuns(
                trx,
                change.organizationId,
                { trigger, eventKey: `${INCIDENT_CHANGE_KEY}${change.id}`, incidentId: change.incidentId, occurredAt: change.createdAt },
                known,
              )
          return runs > 0
        },
        wake: () => {
          if (worker) jobs.notifyWorker(worker)
        },
      }
    },
    wake() {
      if (worker) jobs.notifyWorker(worker)
    },
    async start() {
      await ensureQueue(jobs, WORKFLOW_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 10, retryBackoff: true, expireInSeconds: 5 * 60 })
      worker = await workEach<RunJob>(jobs, WORKFLOW_QUEUE, { batchSize: 10, pollingIntervalSeconds: 0.5 }, (job) => run(job.data, job))
      await subscribe(jobs, 'deploy.recorded', DEPLOY_RECORDED_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true })
      deployWorker = await workEach<DeployRecorded>(
        jobs,
        DEPLOY_RECORDED_QUEUE,
        { batchSize: 10, pollingIntervalSeconds: 1 },
        async (job) => {
          const { organizationId, deployEventId } = job.data
          const queued = await db.transaction().execute(async (trx) => {
            const deploy = await findDeployEvent(trx, organizationId, deployEventId)
            if (!deploy) return 0
            return queueRuns(trx, organizationId, {
              trigger: 'deploy.recorded',
              eventKey: `deploy:${deploy.id}`,
              deployEventId: deploy.id,
              occurredAt: deploy.deployedAt,
            })
          })
          if (queued > 0 && worker) jobs.notifyWorker(worker)
        },
      )
    },
    async stop() {
      await jobs.offWork(WORKFLOW_QUEUE)
      if (deployWorker) await jobs.offWork(DEPLOY_RECORDED_QUEUE)
      worker = undefined
      deployWorker = undefined
    },
  }
}
