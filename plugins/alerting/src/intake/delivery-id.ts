import type { FastifyRequest } from 'fastify'

/** Headers tools send to name a delivery; a retry carries the same value. */
const DELIVERY_HEADERS = ['x-delivery-id', 'webhook-id', 'x-github-delivery'] as const

/** The delivery's own id, prefixed with the header it came in, or undefined when none was sent. */
export function deliveryIdOf(request: FastifyRequest): string | undefined {
  for (const header of DELIVERY_HEADERS) {
    const value = request.headers[header]
    if (typeof value === 'string' && value.trim() !== '') return `${header}:${value.trim()}`
  }
  return undefined
}
