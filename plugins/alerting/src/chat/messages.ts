/** What a chat message about an alert shows: priority, title, service, links, and the analysis once done. */
export interface ChatAlert {
  priority: string
  title: string
  service: string | null
  source: string
  status: string
  alertUrl: string
  /** The analysis's summary when it is done; absent while it runs or when there is none. */
  analysis?: { summary: string; rootCause: string | null }
  /** Why the message is sent, e.g. "Escalation policy Critical, step 1". */
  reason?: string
}

const COLORS: Record<string, number> = { P1: 0xd92d20, P2: 0xf79009, P3: 0xfdb022, P4: 0x2e90fa, P5: 0x98a2b3 }

const headline = (alert: ChatAlert) => `[${alert.priority}] ${alert.title}`
const facts = (alert: ChatAlert) => `Service: ${alert.service ?? 'not given'} · Source: ${alert.source} · Status: ${alert.status}`

/** Slack: incoming webhooks and chat.postMessage take the same text and Block Kit blocks. */
export function slackMessage(alert: ChatAlert) {
  const blocks: object[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*<${alert.alertUrl}|${headline(alert)}>*\n${facts(alert)}` } },
  ]
  if (alert.analysis) {
    const rootCause = alert.analysis.rootCause ? `\n*Root cause:* ${alert.analysis.rootCause}` : ''
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*Analysis:* ${alert.analysis.summary}${rootCause}` } })
  }
  if (alert.reason) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: alert.reason }] })
  return { text: `${headline(alert)} (${facts(alert)})`, blocks }
}

/** Microsoft Teams: an Adaptive Card, the form Teams' incoming webhooks (Workflows) post. */
export function teamsMessage(alert: ChatAlert) {
  const body: object[] = [
    { type: 'TextBlock', size: 'Large', weight: 'Bolder', wrap: true, text: headline(alert) },
    { type: 'TextBlock', wrap: true, isSubtle: true, text: facts(alert) },
  ]
  if (alert.analysis) body.push({ type: 'TextBlock', wrap: true, text: `Analysis: ${alert.analysis.summary}` })
  if (alert.reason) body.push({ type: 'TextBlock', wrap: true, isSubtle: true, size: 'Small', text: alert.reason })
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          actions: [{ type: 'Action.OpenUrl', title: 'Open the alert', url: alert.alertUrl }],
        },
      },
    ],
  }
}

/** Discord: an embed coloured by priority. */
export function discordMessage(alert: ChatAlert) {
  const fields = [
    { name: 'Service', value: alert.service ?? 'not given', inline: true },
    { name: 'Source', value: alert.source, inline: true },
    { name: 'Status', value: alert.status, inline: true },
  ]
  if (alert.analysis) fields.push({ name: 'Analysis', value: alert.analysis.summary.slice(0, 1024), inline: false })
  return {
    content: headline(alert),
    embeds: [
      {
        title: alert.title.slice(0, 256),
        url: alert.alertUrl,
        color: COLORS[alert.priority] ?? 0x98a2b3,
        fields,
        ...(alert.reason ? { footer: { text: alert.reason } } : {}),
      },
    ],
    allowed_mentions: { parse: [] },
  }
}
