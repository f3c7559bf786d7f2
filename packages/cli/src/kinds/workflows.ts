import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Named } from '../context.js'
import type { Context, Kind, Reference } from '../kind.js'
import { Name, NullableText } from './fields.js'

/** The actions that name something of the organization, and what: by name in the file, by id in the API. */
const named = {
  chatIntegration: { to: 'chat', id: 'chatIntegrationId' },
  outboundWebhook: { to: 'webhooks', id: 'outboundWebhookId' },
  escalationPolicy: { to: 'escalationPolicies', id: 'escalationPolicyId' },
  tracker: { to: 'trackers', id: 'trackerId' },
} as const satisfies Record<string, { to: Named; id: string }>
type NamedField = keyof typeof named

/** A responder request's target, by name: a person by e-mail, a team, schedule or policy by name. */
const targetNames = {
  user: 'people',
  team: 'teams',
  schedule: 'schedules',
  escalation_policy: 'escalationPolicies',
} as const satisfies Record<string, Named>
const Target = Type.Object(
  { type: Type.Enum(['user', 'team', 'schedule', 'escalation_policy']), name: Type.String({ minLength: 1 }) },
  { additionalProperties: false, description: 'user: an e-mail; team, schedule, escalation_policy: its name' },
)
type Target = Static<typeof Target>

const Action = Type.Object(
  {
    type: Type.Enum([
      'notify_chat',
      'call_webhook',
      'set_priority',
      'start_analysis',
      'escalate',
      'open_command_room',
      'update_status_page',
      'request_responders',
      'set_field',
      'create_ticket',
      'create_incident_channel',
      'post_status_update',
      'create_rca',
    ]),
    chatIntegration: Type.Optional(
      Type.String({ minLength: 1, description: 'notify_chat, create_incident_channel: a chat integration, by name' }),
    ),
    channel: Type.Optional(Type.Enum(['integration', 'incident'], { description: 'notify_chat on incident triggers: where it posts' })),
    status: Type.Optional(Type.Enum(['investigating', 'identified', 'monitoring', 'resolved'])),
    body: Type.Optional(Type.String({ minLength: 1, description: 'post_status_update: a Mustache template of the update' })),
    outboundWebhook: Type.Optional(Type.String({ minLength: 1, description: 'call_webhook: an outbound webhook, by name' })),
    escalationPolicy: Type.Optional(Type.String({ minLength: 1, description: 'escalate: an escalation policy, by name' })),
    priority: Type.Optional(Type.Enum(['P1', 'P2', 'P3', 'P4', 'P5'])),
    componentStatus: Type.Optional(Type.Enum(['degraded_performance', 'partial_outage', 'major_outage'])),
    publish: Type.Optional(Type.Boolean()),
    targets: Type.Optional(Type.Array(Target, { minItems: 1, description: 'request_responders: whom to page' })),
    message: Type.Optional(Type.String({ minLength: 1 })),
    tracker: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'create_ticket: a ticket tracker, by name (connected through the API: it holds credentials)',
      }),
    ),
    title: Type.Optional(Type.String({ minLength: 1 })),
    field: Type.Optional(Type.String({ minLength: 1, description: 'set_field: a custom incident field, by key' })),
    value: Type.Optional(Type.Unknown({ description: 'set_field: its value' })),
  },
  { additionalProperties: false, description: 'As the API takes it, with what it names by name instead of id' },
)
const Workflow = Type.Object(
  {
    name: Name,
    description: NullableText(1000),
    trigger: Type.Enum([
      'alert.created',
      'alert.acknowledged',
      'alert.resolved',
      'deploy.recorded',
      'incident.declared',
      'incident.status_changed',
      'incident.severity_changed',
      'incident.field_changed',
      'incident.role_assigned',
      'incident.resolved',
    ]),
    enabled: Type.Boolean({ default: true }),
    oncePerIncident: Type.Boolean({ default: false, description: 'Incident triggers: act at most once per incident' }),
    delayMinutes: Type.Integer({ minimum: 0, maximum: 1440, default: 0, description: 'Wait this long, then judge the conditions and act' }),
    conditions: Type.Array(Type.Record(Type.String(), Type.Unknown()), { default: [], description: 'As the API takes them' }),
    actions: Type.Array(Action, { minItems: 1 }),
  },
  { additionalProperties: false, title: 'Workflow' },
)
type Workflow = Static<typeof Workflow>
type Action = Static<typeof Action>
type ApiAction = Record<string, unknown> & { type: string }

/** E-mails are compared as the organization keeps them, in lower case. */
const targetName = (target: Target) => (target.type === 'user' ? target.name.toLowerCase() : target.name)

const fieldsOf = (action: Action) => (Object.keys(named) as NamedField[]).filter((field) => action[field] !== undefined)

async function apiActions(names: Context['names'], actions: Action[]): Promise<ApiAction[]> {
  return Promise.all(
    actions.map(async (action) => {
      const body: ApiAction = { ...action }
      for (const field of fieldsOf(action)) {
        delete body[field]
        body[named[field].id] = await names.id(named[field].to, action[field]!)
      }
      if (action.targets)
        body.targets = await Promise.all(
          action.targets.map(async (target) => ({ type: target.type, id: await names.id(targetNames[target.type], targetName(target)) })),
        )
      return body
    }),
  )
}

async function fileActions(names: Context['names'], actions: ApiAction[]): Promise<Action[]> {
  return Promise.all(
    actions.map(async (action) => {
      const entry: Record<string, unknown> = { ...action }
      for (const [field, { to, id }] of Object.entries(named))
        if (typeof action[id] === 'string') {
          delete entry[id]
          entry[field] = await names.name(to, action[id])
        }
      if (Array.isArray(action.targets))
        entry.targets = await Promise.all(
          (action.targets as Array<{ type: Target['type']; id: string }>).map(async (target) => ({
            type: target.type,
            name: await names.name(targetNames[target.type], target.id),
          })),
        )
      return entry as Action
    }),
  )
}

async function body(names: Context['names'], workflow: Workflow) {
  return { ...workflow, actions: await apiActions(names, workflow.actions) }
}

/** Workflows: a trigger, conditions and actions, naming chat integrations, outbound webhooks and policies by name. */
export const workflows: Kind<Workflow> = {
  noun: 'workflow',
  file: 'workflows.yaml',
  key: 'workflows',
  entry: Workflow,
  whole: ['conditions', 'actions'],
  identity: (workflow) => workflow.name,
  references: (workflow) =>
    workflow.actions.flatMap((action, index) => [
      ...fieldsOf(action).map((field): Reference => ({ at: ['actions', index, field], to: named[field].to, name: action[field]! })),
      ...(action.targets ?? []).map((target, at): Reference => ({
        at: ['actions', index, 'targets', at, 'name'],
        to: targetNames[target.type],
        name: targetName(target),
      })),
    ]),

  async live({ connection: { api, orgId }, names }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/workflows', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the workflows',
    )
    return Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        entry: {
          name: row.name,
          description: row.description,
          trigger: row.trigger,
          enabled: row.enabled,
          oncePerIncident: row.oncePerIncident,
          delayMinutes: row.delayMinutes,
          conditions: row.conditions as Array<Record<string, unknown>>,
          actions: await fileActions(names, row.actions as ApiAction[]),
        },
      })),
    )
  },

  async create({ connection: { api, orgId }, names }, workflow) {
    await answered(
      api.POST('/api/v1/organizations/{orgId}/workflows', { params: { path: { orgId } }, body: (await body(names, workflow)) as never }),
      `creating the workflow ${workflow.name}`,
    )
  },

  async update({ connection: { api, orgId }, names }, live, workflow) {
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/workflows/{workflowId}', {
        params: { path: { orgId, workflowId: live.id } },
        body: (await body(names, workflow)) as never,
      }),
      `changing the workflow ${workflow.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/workflows/{workflowId}', { params: { path: { orgId, workflowId: live.id } } }),
      `deleting the workflow ${live.entry.name}`,
    )
  },
}
