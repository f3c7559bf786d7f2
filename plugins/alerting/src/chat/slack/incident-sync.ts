import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { createPoller, type JobQueue } from '@svc/jobs'
import { interactiveIntegrations, slackClient, slackErrorOf, type SlackIntegration } from '../../destinations/index.js'
import {
  claimIncidentsBehind,
  INCIDENT_CHAT_BEHIND_EXISTS,
  incidentPeople,
  markChatSynced,
  retryChatSyncAfter,
  timelineSince,
} from '../../incidents/index.js'
import { incidentCard, timelineLine } from './cards.js'
import type { SlackPeople } from './people.js'
import {
  incidentChannel,
  incidentChannelRequested,
  insertIncidentChannel,
  messagesAboutIncident,
  recordSlackMessage,
  updateIncidentChannel,
} from './queries.js'
import { renderAlert, renderIncident, type RenderDeps } from './render.js'

const POLL_MS = 1_000
const BATCH = 10
/** Long enough for a round's Slack calls; a replica that dies mid-round leaves the incident to another after it. */
const LEASE_SECONDS = 60
/** When Slack refused or could not be reached. */
const RETRY_SECONDS = 30
/** Timeline lines posted to an incident's channel per round (the rest follow in the next). */
const LINES_PER_ROUND = 50

export interface IncidentChatDeps extends RenderDeps {
  database: Database
  /** Its census looks for incidents whose chat is behind (decision 0033, "Tables"). */
  jobs: JobQueue
  people: SlackPeople
  slackApiUrl: string | undefined
  log: FastifyBaseLogger
}

/** A Slack channel name for the incident: lower-case letters, digits and dashes, at most 80. */
export function channelNameOf(number: number, title: string): string {
  const slug = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|(?<!-)-+$/g, '')
  return `inc-${number}${slug ? `-${slug}` : ''}`.slice(0, 80).replace(/(?<!-)-+$/, '')
}

/**
 * Keeps Slack in step with incidents (decision 0020, "Slack follows the incident"). Every change
 * of an incident writes a timeline entry, which moves its updated_at; this worker takes incidents
 * whose chat is behind that, under a lease, and for each interactive Slack app of the
 * organization: posts the incident's card to the app's channel once, creates the incident's own
 * channel when the app asks for one or a workflow did (inviting its commander and responders) and posts the new
 * timeline entries there, then rewrites every message that shows the incident or one of its
 * alerts. Failures leave the incident behind and try again later.
 */
export function createIncidentChatSync(deps: IncidentChatDeps) {
  const { db } = deps.database

  async function syncWith(integration: SlackIntegration, incidentId: string): Promise<void> {
    const organizationId = integration.organizationId
    const client = slackClient(integration.botToken, deps.slackApiUrl)
    const post = async (channel: string, message: { text: string; blocks?: object[] }) =>
      client.chat.postMessage({ channel, text: message.text, ...(message.blocks ? { blocks: message.blocks as never } : {}) })
    let room = await incidentChannel(db, integration.id, incidentId)
    let card = await renderIncident(db, deps, organizationId, incidentId, room?.name)
    if (!card) return
    const { incident } = card
    const shown = await messagesAboutIncident(db, organizationId, integration.id, incidentId)
    const announced = shown.some((message) => message.incidentId !== null)
    if (incident.status === 'resolved' && !announced && !room) return

    const wantsRoom = integration.incidentChannels || (await incidentChannelRequested(db, integration.id, incidentId))
    if (wantsRoom && !room && incident.status !== 'resolved') {
      const name = channelNameOf(incident.number, incident.title)
      let created
      try {
        created = await client.conversations.create({ name })
      } catch (error) {
        // A channel of that name exists (a rerun after a crash, or a clash): one of its own.
        if (slackErrorOf(error) !== 'name_taken') throw error
        created = await client.conversations.create({ name: `${name.slice(0, 70)}-${incident.id.slice(0, 8)}` })
      }
      // Slack answers ok with the channel it made; anything else threw.
      const channelId = created.channel!.id!
      await insertIncidentChannel(db, {
        incidentId,
        integrationId: integration.id,
        organizationId,
        channelId,
        name: created.channel!.name!,
      })
      room = await incidentChannel(db, integration.id, incidentId)
      // The card names the channel it just got.
      const state = { ...card.state, channelName: room!.name }
      card = { incident, state, ...incidentCard(state) }
    }

    const fresh = new Set<string>()
    const postCard = async (channel: string) => {
      // Slack answers ok with where the message landed (the channel's id, and its ts).
      const posted = await post(channel, card)
      const at = { channel: posted.channel!, ts: posted.ts! }
      await recordSlackMessage(db, { organizationId, integrationId: integration.id, ...at, incidentId })
      fresh.add(`${at.channel}:${at.ts}`)
    }
    if (!announced) await postCard(integration.channel)

    if (room) {
      if (!shown.some((message) => message.incidentId !== null && message.channel === room.channelId)) await postCard(room.channelId)
      const invited = new Set(room.invited)
      const toInvite: string[] = []
      for (const person of await incidentPeople(db, organizationId, incidentId)) {
        const slackUserId = await deps.people.slackUserOf(integration, person.email)
        if (slackUserId && !invited.has(slackUserId)) toInvite.push(slackUserId)
      }
      if (toInvite.length > 0) {
        await client.conversations.invite({ channel: room.channelId, users: toInvite.join(',') })
        await updateIncidentChannel(db, integration.id, incidentId, { invited: [...invited, ...toInvite] })
      }
      const entries = await timelineSince(db, organizationId, incidentId, room.postedThrough, LINES_PER_ROUND)
      if (entries.length > 0) {
        await post(room.channelId, { text: entries.map(timelineLine).join('\n') })
        await updateIncidentChannel(db, integration.id, incidentId, { postedThrough: entries.at(-1)!.createdAt })
      }
    }

    for (const message of shown) {
      if (fresh.has(`${message.channel}:${message.ts}`)) continue
      const rendered = message.alertId ? await renderAlert(db, deps, organizationId, message.alertId) : card
      if (!rendered) continue
      await client.chat.update({ channel: message.channel, ts: message.ts, text: rendered.text, blocks: rendered.blocks as never })
    }
  }

  async function syncIncident(executor: Executor, incident: { id: string; organizationId: string; seenAt: string }) {
    try {
      for (const integration of await interactiveIntegrations(executor, incident.organizationId)) {
        await syncWith(integration, incident.id)
      }
      await markChatSynced(db, incident.id, incident.seenAt)
    } catch (error) {
      deps.log.warn({ err: error, incidentId: incident.id }, 'slack not updated for the incident; trying again later')
      await retryChatSyncAfter(db, incident.id, RETRY_SECONDS)
    }
  }

  const poller = createPoller({
    intervalMs: POLL_MS,
    log: deps.log,
    what: 'keeping Slack in step with incidents',
    watched: { jobs: deps.jobs, condition: INCIDENT_CHAT_BEHIND_EXISTS },
    async round() {
      const behind = await claimIncidentsBehind(db, BATCH, LEASE_SECONDS)
      for (const incident of behind) await syncIncident(db, incident)
      return { more: behind.length === BATCH }
    },
  })
  return { start: () => poller.start(), stop: () => poller.stop(), wake: () => poller.wake() }
}
