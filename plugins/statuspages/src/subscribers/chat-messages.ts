/**
 * What a Slack or Microsoft Teams channel subscribed to a status page is posted: one update, in the
 * subscriber's language, with a link to the page and one to leave. Slack's incoming webhooks (and
 * Mattermost's, which take the same payload) read `text` as the notification and Block Kit
 * `blocks` as the message; Teams' Workflows webhooks post an Adaptive Card sent as a message
 * attachment. Both links open pages: GET never unsubscribes (Slack unfurls links by fetching them),
 * the page it opens has the button.
 */
import type { KnownBlock } from '@slack/types'
import { adaptiveCardMessage, mrkdwn } from '@svc/notifier'

export interface ChatUpdate {
  pageName: string
  /** The incident or maintenance. */
  title: string
  /** The update's status, in words (e.g. "Investigating"). */
  status: string
  body: string
  /** Further lines: the components named, a maintenance's window. */
  details: string[]
  pageUrl: string
  unsubscribe: { label: string; url: string }
}

// Block Kit's limits: a header's text 150 characters, a section's 3,000, a button's label 75.
const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text)

/** Typed by Slack's own Block Kit types (`@slack/types`, what `@slack/web-api` and `@slack/webhook` take). */
export function slackUpdate(update: ChatUpdate): { text: string; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(update.title, 150) } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(`*${mrkdwn(update.status)}*: ${mrkdwn(update.body)}`, 3000) } },
  ]
  if (update.details.length > 0)
    blocks.push({ type: 'context', elements: update.details.map((line) => ({ type: 'mrkdwn', text: cut(mrkdwn(line), 3000) })) })
  blocks.push({
    type: 'actions',
    elements: [
      { type: 'button', text: { type: 'plain_text', text: cut(update.pageName, 75) }, url: update.pageUrl },
      { type: 'button', text: { type: 'plain_text', text: cut(update.unsubscribe.label, 75) }, url: update.unsubscribe.url },
    ],
  })
  return { text: `[${update.pageName}] ${update.title}: ${update.status}`, blocks }
}

export function teamsUpdate(update: ChatUpdate) {
  return adaptiveCardMessage({
    body: [
      { type: 'TextBlock', size: 'Large', weight: 'Bolder', wrap: true, text: update.title },
      { type: 'TextBlock', wrap: true, text: `**${update.status}**: ${update.body}` },
      ...update.details.map((line) => ({ type: 'TextBlock', wrap: true, isSubtle: true, text: line })),
    ],
    actions: [
      { type: 'Action.OpenUrl', title: update.pageName, url: update.pageUrl },
      { type: 'Action.OpenUrl', title: update.unsubscribe.label, url: update.unsubscribe.url },
    ],
  })
}
