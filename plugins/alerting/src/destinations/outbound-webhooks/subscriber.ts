import { sql } from 'kysely'
import { type AlertEventSubscriber, findAlert } from '../../alerts/index.js'
import { alertPayload, type WebhookDelivery } from './delivery.js'
import { subscribedWebhooks } from './queries.js'

/** Outbound webhooks on the alert event bus: each event is delivered to the enabled webhooks subscribed to `alert.<type>`. */
export function outboundWebhookSubscriber(deliveries: WebhookDelivery): AlertEventSubscriber {
  return {
    wantsCreated: (organization) =>
      sql`exists (select 1 from divinux.outbound_webhooks hook where hook.organization_id = ${organization} and hook.enabled)`,
    async handle(trx, events) {
      let queued = 0
      // Each organization's webhooks of an event type, read once for the batch: a storm is
      // thousands of events of one organization.
      const known = new Map<string, Awaited<ReturnType<typeof subscribedWebhooks>>>()
      for (const event of events) {
        const type = `alert.${event.type}` as const
        const key = `${event.organizationId} ${type}`
        const webhooks = known.get(key) ?? (await subscribedWebhooks(trx, event.organizationId, type))
        known.set(key, webhooks)
        if (webhooks.length === 0) continue
        const alert = await findAlert(trx, event.organizationId, event.alertId)
        if (!alert) continue
        const payload = alertPayload(type, event.organizationId, alert, { actorUserId: event.actorUserId })
        for (const webhook of webhooks) {
          await deliveries.queue(trx, {
            webhookId: webhook.id,
            organizationId: event.organizationId,
            event: type,
            alertId: alert.id,
            attemptId: null,
            payload,
          })
          queued += 1
        }
      }
      return queued > 0
    },
    wake: () => deliveries.wake(),
  }
}
