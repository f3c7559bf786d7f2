import type { FastifyRequest } from 'fastify'
import { GRAFANA_SIGNATURE_HEADER, GRAFANA_TIMESTAMP_HEADERS, SIGNATURE_HEADER, type DeliveryProof } from './signature.js'

/** What a delivery says of itself: which config (the API key) and how it proves the secret. */
export interface DeliveryCredentials {
  apiKey: string | undefined
  proof: DeliveryProof
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function authorizationOf(request: FastifyRequest): { bearer?: string; basic?: { user: string; password: string } } {
  const header = request.headers.authorization
  if (!header) return {}
  const [scheme = '', value = ''] = header.trim().split(/\s+/, 2)
  if (scheme.toLowerCase() === 'bearer' && value) return { bearer: value }
  if (scheme.toLowerCase() === 'basic' && value) {
    const decoded = Buffer.from(value, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon >= 0) return { basic: { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) } }
  }
  return {}
}

/**
 * The key and proof of an ingest delivery (decision 0026). At `/ingest/:apiKey` the key is the
 * path's, and an `Authorization` credential (Bearer, or the Basic password) is the secret. At
 * `/ingest` the key is the Basic user name (the password being the secret) or the Bearer token,
 * so the key need not sit in URLs that proxies log.
 */
export function credentialsOf(request: FastifyRequest): DeliveryCredentials {
  const pathKey = (request.params as { apiKey?: string } | undefined)?.apiKey
  const { bearer, basic } = authorizationOf(request)
  const grafanaSignature = single(request.headers[GRAFANA_SIGNATURE_HEADER])
  const timestamp = GRAFANA_TIMESTAMP_HEADERS.map((name) => single(request.headers[name])).find((value) => value !== undefined)
  const proof: DeliveryProof = {
    signature: request.headers[SIGNATURE_HEADER],
    ...(grafanaSignature !== undefined
      ? { grafana: { signature: grafanaSignature, ...(timestamp !== undefined ? { timestamp } : {}) } }
      : {}),
  }
  if (pathKey !== undefined) {
    const sharedSecret = bearer ?? basic?.password
    return { apiKey: pathKey, proof: { ...proof, ...(sharedSecret ? { sharedSecret } : {}) } }
  }
  if (basic) return { apiKey: basic.user || undefined, proof: { ...proof, ...(basic.password ? { sharedSecret: basic.password } : {}) } }
  return { apiKey: bearer, proof }
}
