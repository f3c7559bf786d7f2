import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'
import { priorities } from '../alerts/index.js'
import { SEVERITY_KEY_PATTERN } from '../incidents/index.js'
import { TEMPLATE_HELP } from './templates.js'

export const incidentTriggers = [
  'incident.declared',
  'incident.status_changed',
  'incident.severity_changed',
  'incident.field_changed',
  'incident.role_assigned',
  'incident.resolved',
] as const
export type IncidentTrigger = (typeof incidentTriggers)[number]
export const triggers = ['alert.created', 'alert.acknowledged', 'alert.resolved', 'deploy.recorded', ...incidentTriggers] as const
export type Trigger = (typeof triggers)[number]
export const isIncidentTrigger = (trigger: string): trigger is IncidentTrigger => trigger.startsWith('incident.')
export const runStatuses = ['queued', 'running', 'succeeded', 'failed', 'not_matched'] as const

export const WorkflowParams = Type.Object({ orgId: Type.String(), workflowId: Type.String() })

const Values = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50, uniqueItems: true, description })

/** What must hold for a run to act; every condition of a workflow must hold. */
export const Condition = Type.Union(
  [
    Type.Object(
      { type: Type.Literal('priority'), in: Type.Array(Type.Enum(priorities), { minItems: 1, uniqueItems: true }) },
      { additionalProperties: false, description: 'The alert’s priority is one of these (alert triggers)' },
    ),
    Type.Object(
      { type: Type.Literal('service'), in: Values('Services') },
      {
        additionalProperties: false,
        description: 'The alert’s or deploy’s service is one of these; for an incident, one of its alerts’ services or its service fields',
      },
    ),
    Type.Object(
      { type: Type.Literal('source'), in: Values('Sources, e.g. prometheus, datadog, generic') },
      { additionalProperties: false, description: 'The alert came from one of these sources (alert triggers)' },
    ),
    Type.Object(
      {
        type: Type.Literal('labels'),
        match: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 500 }), { minProperties: 1 }),
      },
      {
        additionalProperties: false,
        description: 'Every label given has exactly this value (alert triggers; for an incident, on one of its alerts)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('deploy_recent'),
        withinMinutes: Type.Integer({ minimum: 1, maximum: 1_440 }),
        service: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default: the alert’s service' })),
      },
      { additionalProperties: false, description: 'A deploy of the service was recorded in the minutes before the event (alert triggers)' },
    ),
    Type.Object(
      { type: Type.Literal('environment'), in: Values('Environments, e.g. production') },
      { additionalProperties: false, description: 'The deploy’s environment is one of these (deploy.recorded)' },
    ),
    Type.Object(
      {
        type: Type.Literal('deploy_status'),
        in: Type.Array(Type.Enum(['queued', 'pending', 'in_progress', 'success', 'failure', 'error', 'inactive']), {
          minItems: 1,
          uniqueItems: true,
        }),
      },
      { additionalProperties: false, description: 'The deploy’s status is one of these (deploy.recorded)' },
    ),
    Type.Object(
      { type: Type.Literal('incident_type'), in: Values('Incident type keys; `none` for incidents of no type') },
      { additionalProperties: false, description: 'The incident is of one of these types (incident triggers)' },
    ),
    Type.Object(
      {
        type: Type.Literal('severity'),
        in: Type.Array(Type.String({ pattern: SEVERITY_KEY_PATTERN, description: 'A key of the organization’s severities' }), {
          minItems: 1,
          maxItems: 10,
          uniqueItems: true,
        }),
      },
      { additionalProperties: false, description: 'The incident’s severity is one of these (incident triggers)' },
    ),
    Type.Object(
      {
        type: Type.Literal('field'),
        field: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'A custom field’s key' }),
        in: Values('Values, as text (a number as written, e.g. 10)'),
      },
      {
        additionalProperties: false,
        description: 'The incident’s custom field holds one of these values (a multi_select: any of its values) (incident triggers)',
      },
    ),
  ],
  { title: 'WorkflowCondition' },
)
export type Condition = Static<typeof Condition>

const Id = (description: string) => Type.String({ format: 'uuid', description })
const Template = (description: string) => Type.String({ minLength: 1, maxLength: 5_000, description: `${description}. ${TEMPLATE_HELP}` })

/** What a run does, in order. */
export const Action = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('notify_chat'),
        chatIntegrationId: Id('A chat integration of the organization'),
        channel: Type.Optional(
          Type.Enum(['integration', 'incident'] as const, {
            description:
              'Incident triggers: integration (unset) posts to the integration’s own channel; incident, to the incident’s channel of that Slack app (made for every incident, or by create_incident_channel)',
          }),
        ),
        message: Type.Optional(Template('Incident triggers: a line posted above the incident’s card')),
      },
      { additionalProperties: false, description: 'Post the alert, deploy or incident to a chat integration' },
    ),
    Type.Object(
      { type: Type.Literal('call_webhook'), outboundWebhookId: Id('An outbound webhook of the organization') },
      {
        additionalProperties: false,
        description: 'Send the event to an outbound webhook (signed and retried like its own events, whatever events it subscribes to)',
      },
    ),
    Type.Object(
      { type: Type.Literal('set_priority'), priority: Type.Enum(priorities) },
      { additionalProperties: false, description: 'Change the alert’s priority (alert triggers)' },
    ),
    Type.Object(
      { type: Type.Literal('start_analysis') },
      { additionalProperties: false, description: 'Ask for an analysis of the alert, within the usage budget (alert triggers)' },
    ),
    Type.Object(
      { type: Type.Literal('escalate'), escalationPolicyId: Id('An escalation policy of the organization') },
      {
        additionalProperties: false,
        description: 'Start escalating the open alert with this policy, unless it is escalating already (alert triggers)',
      },
    ),
    Type.Object(
      { type: Type.Literal('open_command_room') },
      { additionalProperties: false, description: 'Open the alert’s command room, whatever its priority (alert triggers)' },
    ),
    Type.Object(
      {
        type: Type.Literal('update_status_page'),
        componentStatus: Type.Optional(
          Type.Enum(['degraded_performance', 'partial_outage', 'major_outage'] as const, {
            description: 'The status the linked components get; unset: major_outage',
          }),
        ),
        publish: Type.Optional(Type.Boolean({ description: 'Unset or false: a draft incident a person reviews and publishes' })),
      },
      {
        additionalProperties: false,
        description:
          'Open or update an incident on the status pages whose components are linked to the alert’s service; resolve it on alert.resolved (alert triggers)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('request_responders'),
        targets: Type.Array(
          Type.Object(
            {
              type: Type.Enum(['user', 'team', 'schedule', 'escalation_policy'] as const),
              id: Id('A member, team, schedule or escalation policy of the organization'),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 10 },
        ),
        message: Type.Optional(Type.String({ minLength: 1, maxLength: 1_000 })),
      },
      {
        additionalProperties: false,
        description:
          'Page people about the incident: a person, a team, who is on call on a schedule, or an escalation policy, as a responder request (incident triggers)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('create_ticket'),
        trackerId: Id('A ticket tracker of the organization (Jira or Linear)'),
        title: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Default: "INC-n: <the incident’s title>"' })),
      },
      {
        additionalProperties: false,
        description: 'Add a follow-up to the incident whose ticket is created in the tracker (incident triggers)',
      },
    ),
    Type.Object(
      { type: Type.Literal('create_incident_channel'), chatIntegrationId: Id('An interactive Slack app of the organization') },
      {
        additionalProperties: false,
        description:
          'Open the incident’s own channel in a Slack app that does not open one for every incident, inviting its commander and responders (incident triggers)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('post_status_update'),
        status: Type.Optional(
          Type.Enum(['investigating', 'identified', 'monitoring', 'resolved'] as const, { description: 'Unset: investigating' }),
        ),
        body: Template('The update’s words'),
        title: Type.Optional(Template('The public name of a status page incident it opens; unset: named after its components')),
        publish: Type.Optional(Type.Boolean({ description: 'Unset or false: a draft a person reviews and publishes' })),
      },
      {
        additionalProperties: false,
        description:
          'Post a status update to the incident’s timeline and to the status pages following its services, as POST …/incidents/:id/status-updates does (incident triggers)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('create_rca'),
        title: Type.Optional(Template('Unset: "INC-n: <the incident’s title>"')),
      },
      {
        additionalProperties: false,
        description: 'Create a draft RCA document linked to the incident, unless one is linked already (incident triggers)',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('set_field'),
        field: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'A custom field’s key' }),
        value: Type.Unknown({ description: 'A value of the field’s kind, checked as the incident API checks it; null clears it' }),
      },
      { additionalProperties: false, description: 'Set a custom field of the incident (incident triggers)' },
    ),
  ],
  { title: 'WorkflowAction' },
)
export type Action = Static<typeof Action>

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Description = NullableString({ maxLength: 1_000 })
const Conditions = Type.Array(Condition, { maxItems: 20, description: 'Every one must hold; none: every event of the trigger' })
const OncePerIncident = Type.Boolean({
  description: 'Incident triggers: act at most once per incident (a later matching change is recorded not_matched, saying so)',
})
const DelayMinutes = Type.Integer({
  minimum: 0,
  maximum: 1_440,
  description:
    'Wait this long after the event, then evaluate the conditions on the subject as it is then and act (0: at once). A run waiting out its delay when the workflow is disabled does not act.',
})
const Actions = Type.Array(Action, { minItems: 1, maxItems: 10, description: 'Run in order; one failing does not stop the rest' })

export const CreateWorkflow = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    trigger: Type.Enum(triggers),
    conditions: Type.Optional(Conditions),
    actions: Actions,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    oncePerIncident: Type.Optional(OncePerIncident),
    delayMinutes: Type.Optional(DelayMinutes),
  },
  { additionalProperties: false },
)

export const UpdateWorkflow = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    trigger: Type.Optional(Type.Enum(triggers)),
    conditions: Type.Optional(Conditions),
    actions: Type.Optional(Actions),
    enabled: Type.Optional(Type.Boolean()),
    oncePerIncident: Type.Optional(OncePerIncident),
    delayMinutes: Type.Optional(DelayMinutes),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const Workflow = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Description,
    trigger: Type.Enum(triggers),
    conditions: Type.Array(Condition),
    actions: Type.Array(Action),
    enabled: Type.Boolean(),
    oncePerIncident: Type.Boolean(),
    delayMinutes: DelayMinutes,
    problems: Type.Array(Type.String(), {
      description: 'What a run could not do as things stand, e.g. an action whose chat integration was deleted',
    }),
    createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Workflow' },
)

export const ConditionOutcome = Type.Object(
  { type: Type.String(), matched: Type.Boolean(), detail: Type.String() },
  { title: 'WorkflowConditionOutcome' },
)
export type ConditionOutcome = Static<typeof ConditionOutcome>

export const ActionOutcome = Type.Object(
  {
    type: Type.String(),
    status: Type.Enum(['succeeded', 'skipped', 'failed']),
    detail: Type.String({ description: 'What it did, or why it did nothing' }),
  },
  { title: 'WorkflowActionOutcome' },
)
export type ActionOutcome = Static<typeof ActionOutcome>

export const WorkflowRun = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    workflowId: Type.String({ format: 'uuid' }),
    trigger: Type.Enum(triggers),
    alertId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    deployEventId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    incidentId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    status: Type.Enum(runStatuses, {
      description: 'not_matched: a condition did not hold, nothing ran; failed: at least one action failed',
    }),
    conditions: Type.Array(ConditionOutcome, { description: 'Each condition and whether it held (empty until evaluated)' }),
    actions: Type.Array(ActionOutcome, { description: 'Each action run so far, in order' }),
    occurredAt: Timestamp,
    createdAt: Timestamp,
    startsAt: Type.Union([Timestamp, Type.Null()], {
      description: 'When a delayed run evaluates its conditions and acts; null: at once',
    }),
    finishedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'WorkflowRun' },
)

export const WorkflowQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  trigger: Type.Optional(Type.Enum(triggers)),
})

export const RunQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Enum(runStatuses)),
})

export const DryRunBody = Type.Object(
  {
    alertId: Type.Optional(Type.String({ format: 'uuid', description: 'For an alert trigger' })),
    deployEventId: Type.Optional(Type.String({ format: 'uuid', description: 'For deploy.recorded' })),
    incidentId: Type.Optional(Type.String({ format: 'uuid', description: 'For an incident trigger' })),
  },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
)

export const DryRunResult = Type.Object(
  {
    wouldAct: Type.Boolean({ description: 'Every condition holds now: a run would act' }),
    conditions: Type.Array(ConditionOutcome),
    actions: Type.Array(
      Type.Object({
        type: Type.String(),
        wouldFail: Type.Boolean(),
        detail: Type.String({ description: 'What it would do, naming what it acts on, or why it would fail' }),
      }),
    ),
  },
  { title: 'WorkflowDryRun' },
)
