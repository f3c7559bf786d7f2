import { sql, type Kysely } from 'kysely'
import type { DB } from '@svc/db'
import type { Product } from './roles.js'

/** The products billing sells; insights comes with any of them. */
const BILLED = new Set<Product>(['statuspages', 'alerting', 'synthetics'])
/** Stripe statuses under which a plan still holds: past due is Stripe's retry window, not a lapse. */
const HOLDING = ['active', 'trialing', 'past_due']

/**
 * Whether an organization's plan lets it change `product`'s records (issue 17): an organization
 * exempt from billing (created while billing was off) has every product; otherwise the product's
 * own subscription, the bundle, or an organization-wide legacy subscription must hold. With
 * `graceDays`, a plan that lapsed within that many days still holds (ingestion of alerts).
 */
export async function entitledTo(db: Kysely<DB>, organizationId: string, product: Product, graceDays = 0): Promise<boolean> {
  if (!BILLED.has(product)) return true
  const result = await sql<{ entitled: boolean }>`
    select
      coalesce((select billing_exempt from core.organizations where id = ${organizationId}), true)
      or exists (
        select 1 from core.org_product_subscriptions s
        where s.organization_id = ${organizationId} and s.product in (${product}, 'bundle')
          and (s.status = any(${sql`array[${sql.join(HOLDING)}]::text[]`})
            or (${graceDays} > 0 and coalesce(s.provider_updated_at, s.updated_at) > now() - make_interval(days => ${graceDays})))
      )
      or exists (
        select 1 from core.subscriptions legacy
        where legacy.organization_id = ${organizationId} and legacy.status = any(${sql`array[${sql.join(HOLDING)}]::text[]`})
      ) as entitled`.execute(db)
  return result.rows[0]?.entitled ?? false
}
