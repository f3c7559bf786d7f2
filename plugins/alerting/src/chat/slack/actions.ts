import { productRoleAtLeast, productRoleOfUser } from '@svc/auth'
import type { Database } from '@svc/db'
import type { JobQueue } from '@svc/jobs'
import { type Escalator } from '../../paging/index.js'
import {
  type Actor,
  addTimelineText,
  declareIncident,
  editIncident,
  escalatingAlertOf,
  fieldValuesOfWords,
  findIncident,
  incidentByNumber,
  incidentOfAlert,
  incidentOrNotFound,
  joinIncident,
  postStatusUpdate,
  severitiesOf,
  usualSeverity,
  setTaskDone,
} from '../../incidents/index.js'
import { findAlert, moveAlertByPerson } from '../../alerts/index.js'
import { ackTimeoutFromNow } from '../../oncall/index.js'
import type { ButtonAction } from './cards.js'
import { findSlackMessage, incidentOfChannel } from './queries.js'

// What a button or a slash command does, as the person Slack says pressed it. Each answers the
// line the person sees (ephemeral), or throws ChatRefusal with why nothing was done.

export class ChatRefusal extends Error {}

export interface ChatActionDeps {
  database: Database
  /** For what an incident's change asks of other surfaces (its status pages). */
  jobs: JobQueue
  escalator: Pick<Escalator, 'escalateNow'>
}

const DECLARE_USAGE = '`/incident declare [<severity>] [type=<key>] [<field>=<value> …] <title>`'
const STATUSPAGE_USAGE = '`/incident statuspage [INC-n] [template=<key>] [investigating|identified|monitoring|resolved] [<text>]`'
const PUBLIC_STATUSES = ['investigating', 'identified', 'monitoring', 'resolved'] as const

/**
 * The leading `type=<key>` and `<field>=<value>` words of a command (decision 0031), and the
 * words after them. A value runs to the next space; a multi_select's values are split at commas.
 */
function shapingWords(args: string[]) {
  const shaping: { type?: string; fields: Array<[string, string]> } = { fields: [] }
  let index = 0
  for (; index < args.length; index++) {
    const pair = /^([a-z][a-z0-9_]{0,39})=(\S*)$/.exec(args[index]!)
    if (!pair) break
    if (pair[1] === 'type') shaping.type = pair[2]!
    else shaping.fields.push([pair[1]!, pair[2]!])
  }
  return { shaping, words: args.slice(index) }
}

/** The change an HTTP error (409, 404) would answer, as a refusal; anything else is ours to log. */
async function refusingClientErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode
    if (status !== undefined && status >= 400 && status < 500) throw new ChatRefusal((error as Error).message)
    throw error
  }
}

async function actOnAlert(deps: ChatActionDeps, organizationId: string, actor: Actor, action: ButtonAction, alertId: string) {
  const { db } = deps.database
  const alert = await findAlert(db, organizationId, alertId)
  if (!alert) throw new ChatRefusal('That alert no longer exists.')
  if (action === 'join') {
    const incident = await incidentOfAlert(db, organizationId, alert.id)
    if (!incident) throw new ChatRefusal('The alert is in no incident to join.')
    return joinAs(deps, organizationId, actor, incident.id, `INC-${incident.number}`)
  }
  if (action === 'escalate') {
    const outcome = await deps.escalator.escalateNow(organizationId, alert.id)
    if (!outcome.escalated) throw new ChatRefusal(`Nothing to escalate: ${outcome.detail}.`)
    return `Escalated: ${outcome.detail}.`
  }
  const to = action === 'acknowledge' ? 'acknowledged' : 'resolved'
  const moved = await moveAlertByPerson(db, { organizationId, alertId: alert.id }, { to, ackTimeout: ackTimeoutFromNow }, actor.userId, {
    via: 'slack',
  })
  if (!moved) throw new ChatRefusal(`The alert is ${(await findAlert(db, organizationId, alert.id))?.status ?? 'gone'} already.`)
  return `You ${to} the alert.`
}

async function joinAs(deps: ChatActionDeps, organizationId: string, actor: Actor, incidentId: string, reference: string) {
  const joined = await deps.database.db.transaction().execute((trx) => joinIncident(trx, actor, organizationId, incidentId, 'chat'))
  return joined ? `You joined ${reference} as a responder.` : `You are a responder of ${reference} already.`
}

async function actOnIncident(deps: ChatActionDeps, organizationId: string, actor: Actor, action: ButtonAction, incidentId: string) {
  const { db } = deps.database
  return refusingClientErrors(async () => {
    const incident = await incidentOrNotFound(db, organizationId, incidentId)
    const reference = `INC-${incident.number}`
    switch (action) {
      case 'join':
        return joinAs(deps, organizationId, actor, incident.id, reference)
      case 'escalate': {
        const alertId = await escalatingAlertOf(db, organizationId, incident.id)
        if (!alertId) throw new ChatRefusal(`Nothing of ${reference} is waiting to escalate.`)
        const outcome = await deps.escalator.escalateNow(organizationId, alertId)
        if (!outcome.escalated) throw new ChatRefusal(`Nothing to escalate: ${outcome.detail}.`)
        return `Escalated ${reference}: ${outcome.detail}.`
      }
      case 'acknowledge':
        if (incident.status !== 'triage') throw new ChatRefusal(`${reference} is ${incident.status} already.`)
        await db
          .transaction()
          .execute((trx) => editIncident(trx, deps.jobs, actor, organizationId, incident.id, { status: 'investigating' }))
        return `You acknowledged ${reference}: it is investigating.`
      case 'resolve':
        if (incident.status === 'resolved') throw new ChatRefusal(`${reference} is resolved already.`)
        await db.transaction().execute((trx) => editIncident(trx, deps.jobs, actor, organizationId, incident.id, { status: 'resolved' }))
        return `You resolved ${reference}.`
    }
  })
}

/** A button pressed on one of our messages. */
export async function pressButton(
  deps: ChatActionDeps,
  organizationId: string,
  actor: Actor,
  action: ButtonAction,
  subject: { kind: 'alert' | 'incident'; id: string },
): Promise<string> {
  return subject.kind === 'alert'
    ? actOnAlert(deps, organizationId, actor, action, subject.id)
    : actOnIncident(deps, organizationId, actor, action, subject.id)
}

export const COMMAND_HELP = [
  `${DECLARE_USAGE}: declare an incident (SEV3, or the organization’s first severity paging at P3, unless named), you command it`,
  '`/incident set [INC-n] <field>=<value> … [type=<key>]`: set its type or custom fields (an empty value clears one)',
  '`/incident done [INC-n] <role> <number>`: tick a task of a role’s checklist',
  '`/incident ack [INC-n]`: acknowledge it (it moves to investigating)',
  '`/incident resolve [INC-n]`: resolve it',
  '`/incident status [INC-n] <text>`: post a status update to its timeline',
  `${STATUSPAGE_USAGE}: publish it on the status pages, in a template’s words or your own (statuspages manager)`,
  '`/incident join [INC-n]`: join it as a responder',
  'Without INC-n, the incident whose channel this is.',
].join('\n')

/**
 * `/incident <subcommand>` run in `channelId` of the integration's workspace: answers the line
 * the person sees.
 */
export async function runCommand(
  deps: ChatActionDeps,
  integration: { id: string; organizationId: string },
  actor: Actor,
  channelId: string,
  text: string,
): Promise<string> {
  const { db } = deps.database
  const organizationId = integration.organizationId
  const [word = 'help', ...rest] = text.trim().split(/\s+/)
  const subcommand = word.toLowerCase()
  let args = rest

  /** The incident named first in the arguments (INC-n), else the one whose channel this is. */
  const incidentNamed = async (): Promise<string> => {
    const named = /^INC-(\d{1,9})$/i.exec(args[0] ?? '')
    if (named) {
      args = args.slice(1)
      const incidentId = await incidentByNumber(db, organizationId, Number(named[1]))
      if (!incidentId) throw new ChatRefusal(`There is no INC-${named[1]}.`)
      return incidentId
    }
    const incidentId = await incidentOfChannel(db, integration.id, channelId)
    if (!incidentId) throw new ChatRefusal('Name the incident (for example `/incident ack INC-12`): this is not an incident’s channel.')
    return incidentId
  }

  switch (subcommand) {
    case 'declare': {
      const severities = await severitiesOf(db, organizationId)
      const named = severities.find((candidate) => candidate.key.toLowerCase() === args[0]?.toLowerCase())
      const severity = (named ?? usualSeverity(severities)).key
      const { shaping, words } = shapingWords(named ? args.slice(1) : args)
      const title = words.join(' ').trim()
      if (!title) throw new ChatRefusal(`Give the incident a title: ${DECLARE_USAGE}.`)
      if (title.length > 200) throw new ChatRefusal('The title is longer than 200 characters.')
      const now = new Date()
      const incidentId = await refusingClientErrors(() =>
        db.transaction().execute(async (trx) =>
          declareIncident(trx, actor, organizationId, {
            title,
            summary: null,
            severity,
            startedAt: now,
            detectedAt: now,
            commanderId: actor.userId,
            alertIds: [],
            type: shaping.type,
            fields: await fieldValuesOfWords(trx, organizationId, shaping.fields),
          }),
        ),
      )
      const incident = await findIncident(db, organizationId, incidentId)
      return `You declared INC-${incident?.number ?? '?'} (${severity}) and command it.`
    }
    case 'done': {
      const incidentId = await incidentNamed()
      const [role, position] = args
      if (!role || !/^[1-9]\d?$/.test(position ?? '')) throw new ChatRefusal('Say which task: `/incident done [INC-n] <role> <number>`.')
      const { task, changed, reference } = await refusingClientErrors(() =>
        db.transaction().execute((trx) => setTaskDone(trx, actor, organizationId, incidentId, role.toLowerCase(), Number(position), true)),
      )
      return changed ? `Done on ${reference}: ${task}.` : `That was done on ${reference} already: ${task}.`
    }
    case 'set': {
      const incidentId = await incidentNamed()
      const { shaping, words } = shapingWords(args)
      if (words.length > 0 || (shaping.type === undefined && shaping.fields.length === 0))
        throw new ChatRefusal('Say what to set: `/incident set [INC-n] <field>=<value> … [type=<key>]` (an empty value clears a field).')
      const incident = await refusingClientErrors(() =>
        db.transaction().execute(async (trx) =>
          editIncident(trx, deps.jobs, actor, organizationId, incidentId, {
            ...(shaping.type === undefined ? {} : { type: shaping.type }),
            fields: await fieldValuesOfWords(trx, organizationId, shaping.fields),
          }),
        ),
      )
      return `You updated INC-${incident.number}.`
    }
    case 'ack':
    case 'acknowledge':
      return actOnIncident(deps, organizationId, actor, 'acknowledge', await incidentNamed())
    case 'resolve':
      return actOnIncident(deps, organizationId, actor, 'resolve', await incidentNamed())
    case 'join':
      return actOnIncident(deps, organizationId, actor, 'join', await incidentNamed())
    case 'status': {
      const incidentId = await incidentNamed()
      const body = args.join(' ').trim()
      if (!body) throw new ChatRefusal('Say what to post: `/incident status [INC-n] <text>`.')
      await refusingClientErrors(() =>
        db.transaction().execute((trx) => addTimelineText(trx, actor, organizationId, incidentId, 'status_update', body.slice(0, 10_000))),
      )
      return 'Status update posted to the incident’s timeline.'
    }
    case 'statuspage': {
      const incidentId = await incidentNamed()
      // What reaches a status page asks what the status pages API asks for the same change.
      if (!productRoleAtLeast(await productRoleOfUser(deps.database, organizationId, actor.userId, 'statuspages'), 'manager'))
        throw new ChatRefusal('Publishing on status pages needs the statuspages role manager.')
      const template = /^template=([a-z0-9][a-z0-9-]{0,62})$/.exec(args[0] ?? '')?.[1]
      if (template) args = args.slice(1)
      const named = PUBLIC_STATUSES.find((status) => status === args[0]?.toLowerCase())
      if (named) args = args.slice(1)
      const body = args.join(' ').trim()
      if (!body && !template) throw new ChatRefusal(`Say what to publish, or name a template: ${STATUSPAGE_USAGE}.`)
      if (body.length > 5000) throw new ChatRefusal('The text is longer than 5,000 characters.')
      const incident = await incidentOrNotFound(db, organizationId, incidentId)
      const status = named ?? (incident.status === 'resolved' ? 'resolved' : 'investigating')
      await refusingClientErrors(() =>
        db.transaction().execute((trx) =>
          postStatusUpdate(trx, deps.jobs, actor, organizationId, incidentId, {
            status,
            body,
            name: null,
            publish: true,
            ...(template ? { template } : {}),
          }),
        ),
      )
      return `Published on the status pages of INC-${incident.number} (${status}${template ? `, template ${template}` : ''}).`
    }
    default:
      return COMMAND_HELP
  }
}

/** Whether a message of the workspace is one of ours (only those carry buttons we act on). */
export async function isOurMessage(deps: ChatActionDeps, integrationId: string, channel: string, ts: string) {
  return (await findSlackMessage(deps.database.db, integrationId, channel, ts)) !== undefined
}
