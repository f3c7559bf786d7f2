import { Webhook } from 'standardwebhooks'
import { Agent, request } from 'undici'
import { TargetRefused, checkTarget, guardedLookup, type OutboundPolicy } from '@svc/outbound'
import { DeliveryError, type MessageProvider } from './message.js'

/**
 * Where a webhook message goes and the secret that signs it, found again at each attempt; null
 * for an incoming webhook whose URL is its own credential (a Slack or Teams channel's), which is
 * posted to unsigned.
 */
export interface WebhookTarget {
  url: string
  secret: string | null
}

export interface WebhookProviderOptions {
  /**
   * The target of an outbox row's recipient (a surface's reference, e.g. `status-subscriber:<id>`),
   * or undefined when it is gone (the subscriber left): the message then fails for good. The URL
   * and secret stay with their owner's table, so the outbox never holds a signing secret.
   */
  resolve(recipient: string): Promise<WebhookTarget | undefined>
  policy: OutboundPolicy
}

/**
 * Webhook messages through the outbox, signed per the Standard Webhooks specification at each
 * attempt (a retry carries a fresh timestamp, so a receiver's tolerance window never rejects it)
 * with the outbox row's id as `webhook-id` (the same on every retry). The row's text is the JSON
 * body as sent. 2xx is sent; 4xx other than 408 and 429 is final; anything else is retried.
 * Addresses are checked before each attempt and again when the connection is made.
 */
export function webhookProvider(options: WebhookProviderOptions): MessageProvider {
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup(options.policy) },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
    connectTimeout: 5_000,
  })
  return {
    name: 'webhook',
    close: () => void dispatcher.close(),
    async send(message) {
      const target = await options.resolve(message.to)
      if (!target) throw new DeliveryError(`${message.to} no longer exists`, true)
      const messageId = `msg_${message.id}`
      const sentAt = new Date()
      let answer: Awaited<ReturnType<typeof request>>
      try {
        answer = await request(await checkTarget(target.url, options.policy), {
          method: 'POST',
          body: message.text,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'incident-platform',
            ...(target.secret
              ? {
                  'webhook-id': messageId,
                  'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
                  'webhook-signature': new Webhook(target.secret).sign(messageId, sentAt, message.text),
                }
              : {}),
          },
          dispatcher,
        })
      } catch (error) {
        throw new DeliveryError(`webhook: ${(error as Error).message}`, error instanceof TargetRefused, { cause: error })
      }
      const text = (await answer.body.text()).slice(0, 200)
      if (answer.statusCode >= 200 && answer.statusCode < 300) return { messageId }
      const final = answer.statusCode >= 400 && answer.statusCode < 500 && answer.statusCode !== 408 && answer.statusCode !== 429
      throw new DeliveryError(`webhook: answered ${answer.statusCode}${text ? `: ${text}` : ''}`, final)
    },
  }
}
