import { createHmac, timingSafeEqual } from 'node:crypto'

/** Slack refuses requests older than this, and so do we (replays). */
const WINDOW_SECONDS = 5 * 60

/**
 * Why a request is not Slack's, or undefined when it is: `X-Slack-Signature` must be `v0=` and
 * the HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` under the app's signing secret,
 * compared in constant time, with the timestamp within five minutes of now
 * (https://api.slack.com/authentication/verifying-requests-from-slack).
 *
 * Written here rather than taken from @slack/bolt: Bolt is a whole app framework (its own HTTP
 * receiver and Express), and its verifier is these few lines of the documented algorithm.
 */
export function slackSignatureProblem(
  signingSecret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | undefined {
  const timestamp = headers['x-slack-request-timestamp']
  const signature = headers['x-slack-signature']
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return 'the request carries no Slack signature'
  const sentAt = Number(timestamp)
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - sentAt) > WINDOW_SECONDS) return 'the request is not from the last five minutes'
  const expected = Buffer.from(`v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`)
  const given = Buffer.from(signature)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the Slack signature does not match'
  return undefined
}
