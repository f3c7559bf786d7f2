import { ErrorCode, LogLevel, WebClient, type WebAPIPlatformError } from '@slack/web-api'

/**
 * A client of Slack's Web API for one bot token, through Slack's SDK. One attempt per call: a
 * caller that retries does so through its own job's backoff.
 */
export function slackClient(botToken: string, slackApiUrl: string | undefined): WebClient {
  return new WebClient(botToken, {
    ...(slackApiUrl ? { slackApiUrl } : {}),
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
    timeout: 10_000,
  })
}

/** Slack's own error code (`channel_not_found`, `ratelimited`…) when the Web API refused, else undefined. */
export function slackErrorOf(error: unknown): string | undefined {
  const failure = error as { code?: string }
  return failure.code === ErrorCode.PlatformError ? (error as WebAPIPlatformError).data.error : undefined
}

/** Errors that a later attempt may not meet. */
export const TRANSIENT_SLACK_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable'])
