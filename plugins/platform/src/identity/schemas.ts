import { Type } from 'typebox'

export const SubscriptionEntry = Type.Object({
  source: Type.Union([Type.Literal('organization'), Type.Literal('legacy')]),
  organizationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  product: Type.String({ description: 'statuspages, alerting, synthetics or bundle' }),
  plan: Type.String(),
  status: Type.String({ description: 'The payment provider status: active, trialing, past_due, canceled, ...' }),
  currentPeriodEnd: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})

export const UserSubscription = Type.Object(
  {
    status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('none')], {
      description: 'active when any subscription is active or trialing; none when there is none',
    }),
    subscriptions: Type.Array(SubscriptionEntry),
  },
  { title: 'UserSubscription' },
)
