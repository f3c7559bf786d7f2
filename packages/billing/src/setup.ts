import type Stripe from 'stripe'
import { catalog, PRODUCT_KEYS, productName, stripeProductId, type CatalogPrice } from './catalog.js'

export interface ListedProduct {
  key: string
  stripeProductId: string
  name: string
  prices: Array<{
    plan: string
    lookupKey: string
    stripePriceId: string
    unitAmount: number | null
    currency: string
    interval: string | null
  }>
}

/** Our prices Stripe has, by lookup key. */
async function existingPrices(stripe: Stripe): Promise<Map<string, Stripe.Price>> {
  const found = await stripe.prices.list({ lookup_keys: catalog.map((price) => price.lookupKey), active: true, limit: 100 })
  return new Map(found.data.flatMap((price) => (price.lookup_key ? [[price.lookup_key, price] as const] : [])))
}

async function ensureProduct(stripe: Stripe, key: (typeof PRODUCT_KEYS)[number]): Promise<void> {
  try {
    await stripe.products.retrieve(stripeProductId(key))
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error
    await stripe.products.create(
      { id: stripeProductId(key), name: productName(key), metadata: { product: key } },
      { idempotencyKey: `setup-product-${key}` },
    )
  }
}

async function createPrice(stripe: Stripe, price: CatalogPrice): Promise<Stripe.Price> {
  return stripe.prices.create(
    {
      product: stripeProductId(price.product),
      unit_amount: price.unitAmount,
      currency: price.currency,
      recurring: { interval: price.interval },
      lookup_key: price.lookupKey,
      metadata: { product: price.product, plan: price.plan },
    },
    { idempotencyKey: `setup-price-${price.lookupKey}-${price.unitAmount}` },
  )
}

/**
 * Creates what is missing of the catalog in Stripe: each product under our own id, each price
 * under its lookup key. Running it again finds everything and creates nothing. Answers how many
 * products and prices it created.
 */
export async function ensureCatalog(stripe: Stripe): Promise<{ createdPrices: number }> {
  const prices = await existingPrices(stripe)
  let createdPrices = 0
  for (const key of PRODUCT_KEYS) {
    const missing = catalog.filter((price) => price.product === key && !prices.has(price.lookupKey))
    if (missing.length === 0) continue
    await ensureProduct(stripe, key)
    for (const price of missing) {
      await createPrice(stripe, price)
      createdPrices += 1
    }
  }
  return { createdPrices }
}

/** The catalog as Stripe has it: each product with its prices (those setup has created). */
export async function listCatalog(stripe: Stripe): Promise<ListedProduct[]> {
  const prices = await existingPrices(stripe)
  return PRODUCT_KEYS.map((key) => ({
    key,
    stripeProductId: stripeProductId(key),
    name: productName(key),
    prices: catalog
      .filter((price) => price.product === key && prices.has(price.lookupKey))
      .map((price) => {
        const found = prices.get(price.lookupKey)!
        return {
          plan: price.plan,
          lookupKey: price.lookupKey,
          stripePriceId: found.id,
          unitAmount: found.unit_amount,
          currency: found.currency,
          interval: found.recurring?.interval ?? null,
        }
      }),
  }))
}

/** The Stripe price of a product on a plan, by its lookup key; undefined until setup has run. */
export async function priceFor(stripe: Stripe, lookup: string): Promise<Stripe.Price | undefined> {
  const found = await stripe.prices.list({ lookup_keys: [lookup], active: true, limit: 1 })
  return found.data[0]
}
