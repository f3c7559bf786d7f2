import type { Executor } from '@svc/db'

/** Subscriptions of the organizations the user belongs to, and the user's legacy ones. */
export async function subscriptionsOfUser(db: Executor, userId: string) {
  const organizational = await db
    .selectFrom('core.orgProductSubscriptions as s')
    .innerJoin('core.organizationMembers as m', 'm.organizationId', 's.organizationId')
    .select(['s.organizationId', 's.product', 's.plan', 's.status', 's.currentPeriodEnd'])
    .where('m.userId', '=', userId)
    .orderBy('s.organizationId')
    .orderBy('s.product')
    .execute()
  const legacy = await db
    .selectFrom('core.subscriptions')
    .select(['organizationId', 'plan', 'status', 'currentPeriodEnd'])
    .where('userId', '=', userId)
    .orderBy('createdAt')
    .execute()
  return { organizational, legacy }
}
