import { adaptiveCardMessage, mrkdwn } from '@svc/notifier'

/** What a chat message about an alert shows: priority, title, service, links, and the analysis once done. */
export interface ChatAlert {
  priority: string
  title: string
  service: string | null
  source: string
  status: string
  alertUrl: string
  /** The incident the alert belongs to (its INC reference), once correlation placed it in one. */
  incident?: { reference: string }
  /** The analysis's summary when it is done; absent while it runs or when there is none. */
  analysis?: { summary: string; rootCause: string | null }
  /** Why the message is sent, e.g. "Escalation policy Critical, step 1". */
  reason?: string
}

/** What a chat message about a deploy shows (a `deploy.recorded` workflow posts it). */
export interface ChatDeploy {
  deploy: { service: string; environment: string | null; version: string | null; status: string; commitSha: string | null }
  /** The deploy's own page (the pipeline's run), else the deploy event in the API. */
  url: string
  reason?: string
}

/** What a chat message about an incident shows (an incident workflow's notify_chat posts it). */
export interface ChatIncident {
  incident: { reference: string; title: string; severity: string; status: string; type: string | null; commander: string | null }
  url: string
  /** The workflow's own words, above the card. */
  text?: string
  reason?: string
}

export type ChatMessage = ChatAlert | ChatDeploy | ChatIncident

/** The parts every chat's shape is made of. */
interface Card {
  headline: string
  title: string
  facts: Array<{ name: string; value: string }>
  url: string
  linkTitle: string
  color: number
  analysis?: { summary: string; rootCause: string | null }
  reason?: string
  /** Words above the card. */
  text?: string
}

const COLORS: Record<string, number> = { P1: 0xd92d20, P2: 0xf79009, P3: 0xfdb022, P4: 0x2e90fa, P5: 0x98a2b3 }
const DEPLOY_COLORS: Record<string, number> = { success: 0x12b76a, failure: 0xd92d20, error: 0xd92d20 }
const GREY = 0x98a2b3

const isIncidentMessage = (message: ChatMessage): message is ChatIncident => 'url' in message && 'incident' in message

const SEVERITY_COLORS: Record<string, number> = { SEV1: 0xd92d20, SEV2: 0xf79009, SEV3: 0xfdb022, SEV4: 0x2e90fa }

function cardOf(message: ChatMessage): Card {
  const reason = message.reason ? { reason: message.reason } : {}
  if (isIncidentMessage(message)) {
    const { incident } = message
    return {
      headline: `[${incident.severity}] ${incident.reference}: ${incident.title}`,
      title: `${incident.reference}: ${incident.title}`,
      facts: [
        { name: 'Status', value: incident.status },
        ...(incident.type ? [{ name: 'Type', value: incident.type }] : []),
        { name: 'Commander', value: incident.commander ?? 'nobody yet' },
      ],
      url: message.url,
      linkTitle: 'Open the incident',
      color: SEVERITY_COLORS[incident.severity] ?? GREY,
      ...(message.text ? { text: message.text } : {}),
      ...reason,
    }
  }
  if ('deploy' in message) {
    const { deploy } = message
    const what = `${deploy.service}${deploy.version ? ` ${deploy.version}` : ''}`
    return {
      headline: `[deploy] ${what} to ${deploy.environment ?? 'an unnamed environment'}: ${deploy.status}`,
      title: `Deploy of ${what}`,
      facts: [
        { name: 'Environment', value: deploy.environment ?? 'not given' },
        { name: 'Status', value: deploy.status },
        { name: 'Commit', value: deploy.commitSha?.slice(0, 12) ?? 'not given' },
      ],
      url: message.url,
      linkTitle: 'Open the deploy',
      color: DEPLOY_COLORS[deploy.status] ?? GREY,
      ...reason,
    }
  }
  return {
    headline: `[${message.priority}] ${message.title}`,
    title: message.title,
    facts: [
      ...(message.incident ? [{ name: 'Incident', value: message.incident.reference }] : []),
      { name: 'Service', value: message.service ?? 'not given' },
      { name: 'Source', value: message.source },
      { name: 'Status', value: message.status },
    ],
    url: message.alertUrl,
    linkTitle: 'Open the alert',
    color: COLORS[message.priority] ?? GREY,
    ...(message.analysis ? { analysis: message.analysis } : {}),
    ...reason,
  }
}

const factLine = (card: Card) => card.facts.map(({ name, value }) => `${name}: ${value}`).join(' · ')

/**
 * Slack: incoming webhooks and chat.postMessage take the same text and Block Kit blocks. Both are
 * mrkdwn (the text too, in notifications), so every part of the card is escaped.
 */
export function slackMessage(message: ChatMessage) {
  const card = cardOf(message)
  const headline = mrkdwn(card.headline)
  const facts = mrkdwn(factLine(card))
  const blocks: object[] = [
    ...(card.text ? [{ type: 'section', text: { type: 'mrkdwn', text: mrkdwn(card.text) } }] : []),
    { type: 'section', text: { type: 'mrkdwn', text: `*<${card.url}|${headline}>*\n${facts}` } },
  ]
  if (card.analysis) {
    const rootCause = card.analysis.rootCause ? `\n*Root cause:* ${mrkdwn(card.analysis.rootCause)}` : ''
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Analysis:* ${mrkdwn(card.analysis.summary)}${rootCause}` } })
  }
  if (card.reason) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: mrkdwn(card.reason) }] })
  return { text: `${card.text ? `${mrkdwn(card.text)}\n` : ''}${headline} (${facts})`, blocks }
}

/** Microsoft Teams: an Adaptive Card, the form Teams' incoming webhooks (Workflows) post. */
export function teamsMessage(message: ChatMessage) {
  const card = cardOf(message)
  const body: object[] = [
    ...(card.text ? [{ type: 'TextBlock', wrap: true, text: card.text }] : []),
    { type: 'TextBlock', size: 'Large', weight: 'Bolder', wrap: true, text: card.headline },
    { type: 'TextBlock', wrap: true, isSubtle: true, text: factLine(card) },
  ]
  if (card.analysis) body.push({ type: 'TextBlock', wrap: true, text: `Analysis: ${card.analysis.summary}` })
  if (card.reason) body.push({ type: 'TextBlock', wrap: true, isSubtle: true, size: 'Small', text: card.reason })
  return adaptiveCardMessage({ body, actions: [{ type: 'Action.OpenUrl', title: card.linkTitle, url: card.url }] })
}

/** Discord: an embed coloured by priority (or a deploy's outcome). */
export function discordMessage(message: ChatMessage) {
  const card = cardOf(message)
  const fields = card.facts.map((fact) => ({ ...fact, inline: true }))
  if (card.analysis) fields.push({ name: 'Analysis', value: card.analysis.summary.slice(0, 1024), inline: false })
  return {
    content: card.text ? `${card.text}\n${card.headline}` : card.headline,
    embeds: [
      {
        title: card.title.slice(0, 256),
        url: card.url,
        color: card.color,
        fields,
        ...(card.reason ? { footer: { text: card.reason } } : {}),
      },
    ],
    allowed_mentions: { parse: [] },
  }
}
