import type { FastifyRequest } from 'fastify'
import { mayReadProduct } from '@svc/auth'
import { sourceProducts } from '../analyses/schemas.js'

export type SourceProduct = (typeof sourceProducts)[number]

/**
 * The surfaces whose incidents the caller may see in an RCA (decision 0012): an incident is
 * shown only to who may read it on its own surface, alerting `viewer` for alerts.
 */
export async function readableSources(request: FastifyRequest): Promise<ReadonlySet<SourceProduct>> {
  const readable = await Promise.all(sourceProducts.map(async (product) => [product, await mayReadProduct(request, product)] as const))
  return new Set(readable.flatMap(([product, allowed]) => (allowed ? [product] : [])))
}
