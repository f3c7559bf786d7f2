import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { applyEvent, requireBilling, viaStripe, type Billing, type Stripe } from '@svc/billing'
import { BadRequestError, BillingDisabledError } from '@svc/http'
import type { Notifier } from '@svc/notifier'
import { ownersOf } from '../queries/organizations.js'

/** Stripe's own default: a signature older than five minutes is a replay. */
const TOLERANCE_SECONDS = 300

/**
 * `POST /api/v1/billing/webhook` (public; Stripe's signature is the credential). Verified on the
 * raw body with the SDK, then applied once per event id in one transaction with its effect. A
 * bad signature is 400 and changes nothing; an event type we do not handle is acknowledged.
 * Its own encapsulated context: the JSON parser here keeps the body as the bytes Stripe signed.
 */
export const billingWebhookRoutes: FastifyPluginAsyncTypebox<{ billing?: Billing; notifier: Notifier; appUrl?: string }> = async (
  app,
  options,
) => {
  const db = app.database.db
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body))

  app.post(
    '/api/v1/billing/webhook',
    {
      schema: {
        tags: ['billing'],
        summary: 'Stripe events (public: verified by their Stripe-Signature)',
        headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String()) }),
        body: Type.String({ description: 'The event as Stripe sent it' }),
        response: { 200: Type.Object({ received: Type.Boolean(), duplicate: Type.Optional(Type.Boolean()) }) },
      },
      config: { public: true },
    },
    async (request) => {
      const { stripe, config } = requireBilling(options.billing)
      if (!config.webhookSecret) throw new BillingDisabledError('the billing webhook is not configured (STRIPE_WEBHOOK_SECRET is not set)')
      let event: Stripe.Event
      try {
        event = stripe.webhooks.constructEvent(
          request.body,
          request.headers['stripe-signature'] ?? '',
          config.webhookSecret,
          TOLERANCE_SECONDS,
        )
      } catch (error) {
        throw new BadRequestError(`stripe-signature: ${(error as Error).message}`)
      }
      // A completed checkout names its subscription: it is read back from Stripe (the source of
      // truth) before the transaction, never while holding it.
      const subscriptionId = event.type === 'checkout.session.completed' ? event.data.object.subscription : null
      const subscription =
        typeof subscriptionId === 'string' ? await viaStripe(() => stripe.subscriptions.retrieve(subscriptionId)) : undefined
      const applied = await db.transaction().execute(async (trx) => {
        const result = await applyEvent(trx, event, subscription)
        if (result.paymentFailed) {
          for (const owner of await ownersOf(trx, result.paymentFailed.organizationId)) {
            await options.notifier.queueEmail(trx, {
              organizationId: result.paymentFailed.organizationId,
              kind: 'billing.payment_failed',
              to: owner.email,
              subject: `Payment failed for ${owner.name}`,
              text: [
                `A payment for ${owner.name}'s subscription failed, and the subscription is past due.`,
                '',
                'Update the payment method in the billing portal to keep every product writable.',
                ...(options.appUrl ? ['', `${options.appUrl}/billing`] : []),
              ].join('\n'),
            })
          }
        }
        return result
      })
      request.log.info({ eventId: event.id, type: event.type, applied: applied.applied }, 'stripe event')
      return applied.applied ? { received: true } : { received: true, duplicate: true }
    },
  )
}
