import { ErrorCode, LogLevel, WebClient, type WebAPIPlatformError } from '@slack/web-api'
import type { ChatIntegrationRow } from '../queries/chat-integrations.js'
import { TargetRefused, type OutboundClient } from '../outbound/http.js'
import { discordMessage, slackMessage, teamsMessage, type ChatMessage } from './messages.js'

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
  async function postToSlackApi(integration: ChatIntegrationRow, message: ChatMessage) {
    // One attempt per job: retries are pg-boss's, with its backoff.
    const client = new WebClient(integration.botToken ?? '', {
      ...(slackApiUrl ? { slackApiUrl } : {}),
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
      timeout: 10_000,
    })
    try {
      await client.chat.postMessage({ channel: integration.channel ?? '', ...slackMessage(message) })
    } catch (error) {
      const failure = error as { code?: string; message: string }
      if (failure.code === ErrorCode.PlatformError) {
        const slack = (error as WebAPIPlatformError).data.error
        throw new ChatFailure(`slack: ${slack}`, !['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable'].includes(slack))
      }
      throw new ChatFailure(`slack: ${failure.message}`, false)
    }
  }

  return {
    async send(integration: ChatIntegrationRow, message: ChatMessage): Promise<void> {
      if (integration.kind === 'slack_bot') return postToSlackApi(integration, message)
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
      if (answer.status >= 200 && answer.status < 300) return
      const permanent = answer.status < 500 && answer.status !== 429 && answer.status !== 408
      throw new ChatFailure(
        `${integration.kind} answered ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`,
        permanent,
      )
    },
  }
}
