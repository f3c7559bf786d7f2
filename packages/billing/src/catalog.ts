// What is sold (spec, "Pricing model"): each single product at $65 a month on Team and $150 on
// Business; the bundle of all products at $150 and $400. Enterprise is priced by sales, not
// sold through checkout.

export const PRODUCT_KEYS = ['statuspages', 'alerting', 'synthetics', 'bundle'] as const
export type ProductKey = (typeof PRODUCT_KEYS)[number]
export const SOLD_PLANS = ['team', 'business'] as const
export type SoldPlan = (typeof SOLD_PLANS)[number]
export type Plan = SoldPlan | 'enterprise'

const names: Record<ProductKey, string> = {
  statuspages: 'Status pages',
  alerting: 'Alerting',
  synthetics: 'Synthetic checks',
  bundle: 'Bundle: status pages, alerting and synthetic checks',
}

/** Monthly prices in US cents. */
const amounts: Record<ProductKey, Record<SoldPlan, number>> = {
  statuspages: { team: 6500, business: 15000 },
  alerting: { team: 6500, business: 15000 },
  synthetics: { team: 6500, business: 15000 },
  bundle: { team: 15000, business: 40000 },
}

/** The Stripe product id we create each product with (Stripe accepts our own ids), so setup finds it again. */
export const stripeProductId = (product: ProductKey) => `incident_platform_${product}`

/** The `lookup_key` of a product's monthly price on a plan: how setup and checkout find it again. */
export const lookupKey = (product: ProductKey, plan: SoldPlan) => `${product}_${plan}_monthly`

export interface CatalogPrice {
  product: ProductKey
  plan: SoldPlan
  lookupKey: string
  unitAmount: number
  currency: 'usd'
  interval: 'month'
}

export const catalog: CatalogPrice[] = PRODUCT_KEYS.flatMap((product) =>
  SOLD_PLANS.map((plan) => ({
    product,
    plan,
    lookupKey: lookupKey(product, plan),
    unitAmount: amounts[product][plan],
    currency: 'usd' as const,
    interval: 'month' as const,
  })),
)

export const productName = (product: ProductKey) => names[product]

/** The product and plan a price's lookup key names, if it is one of ours. */
export function priceOf(lookup: string | null | undefined): { product: ProductKey; plan: SoldPlan } | undefined {
  return catalog.find((price) => price.lookupKey === lookup)
}
