import type { Block } from '@slack/web-api'
import type { ChatIntegrationRow } from './queries.js'
import { TargetRefused, type OutboundClient } from '../http.js'
import { discordMessage, slackMessage, teamsMessage, type ChatMessage } from './messages.js'
import { TRANSIENT_SLACK_ERRORS, slackClient, slackErrorOf } from './slack-client.js'

/** A message that did not reach the chat; `permanent` when trying again cannot help. */
export class ChatFailure extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message)
  }
}

export type ChatSender = ReturnType<typeof createChatSender>

/**
 * Posts to a chat integration: incoming webhooks through the outbound client (which refuses
 * non-public targets unless allowed), Slack's Web API through its SDK (`@slack/web-api`).
 */
export function createChatSender({ outbound, slackApiUrl }: { outbound: OutboundClient; slackApiUrl?: string | undefined }) {
  async function postToSlackApi(integration: ChatIntegrationRow, message: ChatMessage, blocks?: object[], channel?: string) {
    const client = slackClient(integration.botToken ?? '', slackApiUrl)
    const body = slackMessage(message)
    try {
      const posted = await client.chat.postMessage({
        channel: channel ?? integration.channel ?? '',
        ...body,
        // Our blocks are Block Kit JSON built by messages.ts; the SDK's types are a union we do not restate.
        blocks: [...body.blocks, ...(blocks ?? [])] as Block[],
      })
      return { channel: posted.channel ?? integration.channel ?? '', ts: posted.ts ?? '' }
    } catch (error) {
      const slack = slackErrorOf(error)
      if (slack) throw new ChatFailure(`slack: ${slack}`, !TRANSIENT_SLACK_ERRORS.has(slack))
      throw new ChatFailure(`slack: ${(error as Error).message}`, false)
    }
  }

  return {
    /**
     * Posts the message; through Slack's Web API with `blocks` added after its own (buttons), to
     * `channel` instead of the integration's when given, and answers where it landed so it can be
     * rewritten later.
     */
    async send(
      integration: ChatIntegrationRow,
      message: ChatMessage,
      blocks?: object[],
      channel?: string,
    ): Promise<{ channel: string; ts: string } | undefined> {
      if (integration.kind === 'slack_bot') return postToSlackApi(integration, message, blocks, channel)
      const payload =
        integration.kind === 'slack'
          ? slackMessage(message)
          : integration.kind === 'teams'
            ? teamsMessage(message)
            : discordMessage(message)
      let answer
      try {
        answer = await outbound.postJson(integration.webhookUrl ?? '', JSON.stringify(payload))
      } catch (error) {
        throw new ChatFailure(`${integration.kind}: ${(error as Error).message}`, error instanceof TargetRefused)
      }
      if (answer.status >= 200 && answer.status < 300) return undefined
      const permanent = answer.status < 500 && answer.status !== 429 && answer.status !== 408
      throw new ChatFailure(
        `${integration.kind} answered ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`,
        permanent,
      )
    },
  }
}
