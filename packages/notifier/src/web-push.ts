import { Agent } from 'node:https'
import { rootCertificates } from 'node:tls'
import type { WebPushConfig } from '@svc/config'
import { TargetRefused, checkTarget, guardedLookup } from '@svc/outbound'
import webpush, { WebPushError, type PushSubscription } from 'web-push'
import { DeliveryError, type MessageProvider, type OutboundMessage } from './message.js'

/** How long a push service keeps a page for a device that is offline: a page older than this is noise. */
const TTL_SECONDS = 60 * 60

/** A browser's push subscription as stored with a contact method. */
export interface WebPushSubscription {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

/**
 * A push message's recipient in the outbox: every subscription of the person (each device they
 * subscribed), so one page is one message and one attempt however many devices there are.
 */
export const pushRecipient = (subscriptions: WebPushSubscription[]): string => JSON.stringify(subscriptions)

function parseRecipient(recipient: string): WebPushSubscription[] {
  const parsed = JSON.parse(recipient) as WebPushSubscription | WebPushSubscription[]
  return Array.isArray(parsed) ? parsed : [parsed]
}

/** 404 and 410 (RFC 8030 7.3): the subscription expired or the person unsubscribed; it never comes back. */
const withdrawn = (error: unknown) => error instanceof WebPushError && (error.statusCode === 404 || error.statusCode === 410)

function deliveryError(error: unknown, endpoint: string): DeliveryError {
  const host = new URL(endpoint).host
  if (error instanceof WebPushError) {
    // Other 4xx but 429 will not pass either.
    const gone = withdrawn(error)
    const permanent = gone || (error.statusCode >= 400 && error.statusCode < 500 && error.statusCode !== 429)
    const why = gone ? 'the subscription has expired or was withdrawn' : error.body.slice(0, 200) || error.message
    return new DeliveryError(`web push to ${host} answered ${error.statusCode}: ${why}`, permanent, { cause: error })
  }
  const refused = error instanceof TargetRefused || (error as { cause?: unknown }).cause instanceof TargetRefused
  return new DeliveryError(`web push to ${host}: ${(error as Error).message}`, refused, { cause: error })
}

/**
 * Web push through the `web-push` package: the payload encrypted for each subscription
 * (RFC 8291) and signed with our VAPID key (RFC 8292), sent with high urgency. The connection
 * refuses non-public push services unless ALLOW_PRIVATE_TARGETS (a subscription's endpoint is
 * whatever a browser, or someone posing as one, gave us). The endpoints the push service says
 * are gone are handed to `onWithdrawn` (their owner removes them), so no later page tries them.
 */
export function webPushProvider(config: WebPushConfig, onWithdrawn?: (endpoints: string[]) => Promise<void>): MessageProvider {
  const policy = { allowPrivateTargets: config.allowPrivateTargets }
  const agent = new Agent({
    keepAlive: true,
    lookup: guardedLookup(policy),
    ...(config.extraCa ? { ca: [...rootCertificates, ...config.extraCa] } : {}),
  })
  const options = {
    vapidDetails: { subject: config.subject, publicKey: config.publicKey, privateKey: config.privateKey },
    TTL: TTL_SECONDS,
    urgency: 'high' as const,
    timeout: 10_000,
    agent,
  }
  return {
    name: 'web-push',
    close: () => agent.destroy(),
    async send(message: OutboundMessage) {
      const subscriptions = parseRecipient(message.to)
      // Every device at once; the page counts as sent when any of them took it.
      const results = await Promise.allSettled(
        subscriptions.map(async (subscription) => {
          // An address given as such is never looked up, so the agent's lookup cannot check it: checked here.
          await checkTarget(subscription.endpoint, policy)
          // The Topic (RFC 8030 §5.4) is the outbox id: a push service replaces an undelivered
          // message of the same topic, so a page sent twice reaches a device once.
          return webpush.sendNotification(subscription as PushSubscription, message.text, {
            ...options,
            topic: message.id.replaceAll('-', ''),
          })
        }),
      )
      const gone = subscriptions.filter((subscription, index) => {
        const result = results[index]!
        return result.status === 'rejected' && withdrawn(result.reason)
      })
      if (gone.length > 0) await onWithdrawn?.(gone.map((subscription) => subscription.endpoint))
      const accepted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
      if (accepted.length > 0) return { messageId: accepted.map((sent) => String(sent.headers.location ?? sent.statusCode)).join(' ') }
      const failures = results.map((result, index) =>
        deliveryError(result.status === 'rejected' ? result.reason : new Error('no answer'), subscriptions[index]!.endpoint),
      )
      if (failures.length === 0) throw new DeliveryError('web push: the message names no subscription', true)
      throw new DeliveryError(
        failures.map((failure) => failure.message).join('; '),
        failures.every((failure) => failure.permanent),
      )
    },
  }
}
