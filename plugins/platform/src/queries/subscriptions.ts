import type { Executor } from '@svc/db'

export async function subscriptionsOfOrganization(db: Executor, organizationId: string) {
  const [perProduct, legacy] = await Promise.all([
    db
      .selectFrom('core.orgProductSubscriptions')
      .select(['product', 'plan', 'status', 'currentPeriodEnd', 'cancelAtPeriodEnd'])
      .where('organizationId', '=', organizationId)
      .execute(),
    db
      .selectFrom('core.subscriptions')
      .select(['plan', 'status', 'currentPeriodEnd'])
      .where('organizationId', '=', organizationId)
      .orderBy('createdAt', 'desc')
      .executeTakeFirst(),
  ])
  return { perProduct, legacy }
}
