// Block Kit for what Slack shows of incidents and pages, with the buttons that act on them.
// A button's action_id is what it does; its value names what it acts on (`incident:<id>` or
// `alert:<id>`), always looked up again inside the integration's organization.

import { mrkdwn } from '@svc/notifier'

export const BUTTON_ACTIONS = ['acknowledge', 'resolve', 'escalate', 'join'] as const
export type ButtonAction = (typeof BUTTON_ACTIONS)[number]

const LABELS: Record<ButtonAction, string> = {
  acknowledge: 'Acknowledge',
  resolve: 'Resolve',
  escalate: 'Escalate',
  join: 'Join as responder',
}

function button(action: ButtonAction, subject: string) {
  return {
    type: 'button',
    action_id: action,
    text: { type: 'plain_text', text: LABELS[action] },
    value: subject,
    ...(action === 'resolve' ? { style: 'primary' } : action === 'escalate' ? { style: 'danger' } : {}),
  }
}

function actionsBlock(subject: string, actions: ButtonAction[]): object[] {
  return actions.length > 0 ? [{ type: 'actions', block_id: subject, elements: actions.map((action) => button(action, subject)) }] : []
}

export interface AlertCardState {
  alertId: string
  status: string
  acknowledgedBy: string | null
  inIncident: boolean
}

/** What a page message adds under the alert: who acknowledged it, and the buttons that still apply. */
export function alertControls(state: AlertCardState): object[] {
  const actions: ButtonAction[] =
    state.status === 'open' ? ['acknowledge', 'resolve', 'escalate'] : state.status === 'acknowledged' ? ['resolve'] : []
  if (state.inIncident) actions.push('join')
  const status =
    state.status === 'acknowledged' && state.acknowledgedBy
      ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `:eyes: Acknowledged by ${mrkdwn(state.acknowledgedBy)}` }] }]
      : state.status === 'resolved'
        ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: ':white_check_mark: Resolved' }] }]
        : []
  return [...status, ...actionsBlock(`alert:${state.alertId}`, actions)]
}

export interface IncidentCardState {
  id: string
  reference: string
  title: string
  severity: string
  status: string
  commander: string | null
  responders: string[]
  alertCount: number
  url: string
  channelName?: string
  lastChange?: string
  /** Its type's name, when it has one. */
  type?: string
  /** Its custom fields that are set, by name, as text. */
  fields?: Array<{ name: string; value: string }>
}

/** Slack shows at most ten fields in a section. */
const SECTION_FIELDS = 10

/** An incident as its Slack message shows it (mrkdwn, escaped); rewritten in place whenever the incident changes. */
export function incidentCard(state: IncidentCardState): { text: string; blocks: object[] } {
  const headline = mrkdwn(`[${state.severity}] ${state.reference}: ${state.title}`)
  const facts = [
    `*Status:* ${state.status}`,
    `*Commander:* ${mrkdwn(state.commander ?? 'nobody')}`,
    `*Responders:* ${state.responders.length > 0 ? mrkdwn(state.responders.join(', ')) : 'none yet'}`,
    `*Alerts:* ${state.alertCount}`,
    ...(state.type ? [`*Type:* ${mrkdwn(state.type)}`] : []),
    ...(state.fields ?? []).map((field) => `*${mrkdwn(field.name)}:* ${mrkdwn(field.value)}`),
  ].slice(0, SECTION_FIELDS)
  const context = [
    ...(state.channelName ? [`Worked in #${state.channelName}`] : []),
    ...(state.lastChange ? [mrkdwn(state.lastChange)] : []),
  ]
  const actions: ButtonAction[] =
    state.status === 'resolved' ? [] : [...(state.status === 'triage' ? (['acknowledge'] as const) : []), 'resolve', 'escalate', 'join']
  return {
    text: `${headline} (${state.status})`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*<${state.url}|${headline}>*` } },
      { type: 'section', fields: facts.map((text) => ({ type: 'mrkdwn', text })) },
      ...(context.length > 0 ? [{ type: 'context', elements: context.map((text) => ({ type: 'mrkdwn', text })) }] : []),
      ...actionsBlock(`incident:${state.id}`, actions),
    ],
  }
}

/** One line (mrkdwn, escaped) of an incident channel for a timeline entry. */
export function timelineLine(entry: { kind: string; body: string | null; data: unknown; author: string | null }): string {
  const by = entry.author ? ` (${mrkdwn(entry.author)})` : ''
  const body = mrkdwn(entry.body ?? '')
  const data = (entry.data ?? {}) as Record<string, unknown>
  const datum = (key: string) => mrkdwn(String(data[key]))
  switch (entry.kind) {
    case 'note':
      return `:memo: Note${by}: ${body}`
    case 'status_update':
      return `:mega: Status update${by}: ${body}`
    case 'status_changed':
      return `:arrows_counterclockwise: Status ${datum('from')} → ${datum('to')}${by}`
    case 'severity_changed':
      return `:rotating_light: Severity ${datum('from')} → ${datum('to')}${by}`
    case 'responder_joined':
      return `:wave: ${mrkdwn(entry.author ?? 'Someone')} joined as a responder`
    case 'role_assigned':
      return `:bust_in_silhouette: Role ${datum('role')} assigned${by}`
    default:
      return `• ${entry.kind.replaceAll('_', ' ')}${by}`
  }
}

/** A subject of a button's value: what it acts on. */
export function subjectOf(value: string): { kind: 'alert' | 'incident'; id: string } | undefined {
  const match = /^(alert|incident):([0-9a-f-]{36})$/.exec(value)
  return match ? { kind: match[1] as 'alert' | 'incident', id: match[2]! } : undefined
}
