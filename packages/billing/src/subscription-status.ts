import { Type, type Static } from 'typebox'
import type { Executor } from '@svc/db'

export const SubscriptionEntry = Type.Object({
  source: Type.Union([Type.Literal('organization'), Type.Literal('personal'), Type.Literal('legacy')], {
    description:
      'organization: a product of one of the caller’s organizations; personal: the caller’s own checkout; legacy: older per-user billing',
  }),
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

const ACTIVE_STATUSES = new Set(['active', 'trialing'])

/**
 * A person's subscription status, as both services answer `GET /api/v1/users/me/subscription`:
 * the products of their organizations, their own (personal) subscriptions and legacy ones.
 */
export async function userSubscription(db: Executor, userId: string): Promise<Static<typeof UserSubscription>> {
  const organizational = await db
    .selectFrom('core.orgProductSubscriptions as s')
    .innerJoin('core.organizationMembers as m', 'm.organizationId', 's.organizationId')
    .select(['s.organizationId', 's.product', 's.plan', 's.status', 's.currentPeriodEnd'])
    .where('m.userId', '=', userId)
    .where('m.joinedAt', 'is not', null)
    .orderBy('s.organizationId')
    .orderBy('s.product')
    .execute()
  const own = await db
    .selectFrom('core.subscriptions')
    .select(['organizationId', 'product', 'plan', 'status', 'currentPeriodEnd'])
    .where('userId', '=', userId)
    .orderBy('createdAt')
    .execute()
  const subscriptions = [
    ...organizational.map((row) => ({ source: 'organization' as const, ...row })),
    ...own.map((row) => ({ ...row, source: row.product ? ('personal' as const) : ('legacy' as const), product: row.product ?? 'bundle' })),
  ].map((entry) => ({ ...entry, currentPeriodEnd: entry.currentPeriodEnd?.toISOString() ?? null }))
  const status =
    subscriptions.length === 0
      ? ('none' as const)
      : subscriptions.some((entry) => ACTIVE_STATUSES.has(entry.status))
        ? ('active' as const)
        : ('inactive' as const)
  return { status, subscriptions }
}
