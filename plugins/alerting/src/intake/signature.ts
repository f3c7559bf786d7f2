import { createHmac, timingSafeEqual } from 'node:crypto'
import { UnauthorizedError } from '@svc/http'

export const SIGNATURE_HEADER = 'x-webhook-signature'
/** How far a timestamped signature may be from now, either way: replays older than this are refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300

function hmac(secret: string, ...parts: Buffer[]): Buffer {
  const mac = createHmac('sha256', secret)
  for (const part of parts) mac.update(part)
  return mac.digest()
}

function sameDigest(expected: Buffer, presentedHex: string): boolean {
  if (!/^[0-9a-f]{64}$/i.test(presentedHex)) return false
  const presented = Buffer.from(presentedHex, 'hex')
  return presented.length === expected.length && timingSafeEqual(presented, expected)
}

type Parsed = { kind: 'plain'; digest: string } | { kind: 'timestamped'; timestamp: number; digests: string[] }

/** `sha256=<hex>` (GitHub style) or `t=<unix>,v1=<hex>[,v1=<hex>]` (Stripe style); anything else is undefined. */
function parse(header: string): Parsed | undefined {
  const plain = /^sha256=([0-9a-fA-F]+)$/.exec(header.trim())
  if (plain?.[1]) return { kind: 'plain', digest: plain[1] }
  const fields = header.split(',').map((field) => field.trim().split('='))
  const timestamp = fields.find(([key]) => key === 't')?.[1]
  const digests = fields.filter(([key]) => key === 'v1').map(([, value]) => value ?? '')
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || digests.length === 0) return undefined
  return { kind: 'timestamped', timestamp: Number(timestamp), digests }
}

/**
 * Checks `x-webhook-signature` over the exact bytes received, in constant time. With a secret the
 * header is required; without one it has nothing to be checked against, but a malformed one is
 * still refused. Every refusal is a 401 (never a 500), with the same message for a wrong digest.
 */
export function verifySignature(
  header: string | string[] | undefined,
  secret: string | null,
  rawBody: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): void {
  if (Array.isArray(header)) throw new UnauthorizedError(`send one ${SIGNATURE_HEADER} header`)
  if (header === undefined) {
    if (secret !== null) throw new UnauthorizedError(`this webhook requires a signed body: send ${SIGNATURE_HEADER}`)
    return
  }
  const parsed = parse(header)
  if (!parsed) throw new UnauthorizedError(`${SIGNATURE_HEADER} must be sha256=<hex> or t=<unix time>,v1=<hex>`)
  if (secret === null) return
  if (parsed.kind === 'plain') {
    if (!sameDigest(hmac(secret, rawBody), parsed.digest)) throw new UnauthorizedError('the signature does not match the body')
    return
  }
  if (Math.abs(nowSeconds - parsed.timestamp) > SIGNATURE_TOLERANCE_SECONDS)
    throw new UnauthorizedError('the signature timestamp is outside the 300-second tolerance')
  const expected = hmac(secret, Buffer.from(`${parsed.timestamp}.`), rawBody)
  if (!parsed.digests.some((digest) => sameDigest(expected, digest))) throw new UnauthorizedError('the signature does not match the body')
}

/** Grafana's signature header when the user keeps the default name (Grafana 12's HMAC option). */
export const GRAFANA_SIGNATURE_HEADER = 'x-grafana-alerting-signature'
/** Timestamp headers Grafana is set up with (it has no default name; these are its documentation's). */
export const GRAFANA_TIMESTAMP_HEADERS = ['x-grafana-alerting-timestamp', 'x-grafana-alerting-signature-timestamp'] as const

/**
 * What a delivery offers to prove it comes from whoever holds the config's secret (decision
 * 0026): our signature, Grafana's, or, for senders that cannot sign (Alertmanager, Grafana's
 * basic auth, Datadog's custom headers), the secret itself as a credential.
 */
export interface DeliveryProof {
  /** `x-webhook-signature`. */
  signature: string | string[] | undefined
  /** Grafana's bare hex HMAC-SHA256 of the body, or of `<timestamp>:<body>` with a timestamp header. */
  grafana?: { signature: string; timestamp?: string }
  /** The secret as sent: `Authorization: Bearer` at a keyed path, or the Basic password. */
  sharedSecret?: string
}

function sameSecret(expected: string, presented: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Checks a delivery against the config's secret: `x-webhook-signature` when present (as
 * `verifySignature`, a malformed one refused even without a secret), else Grafana's signature,
 * else the secret presented as a credential. Without a secret nothing more is asked. Every
 * refusal is a 401.
 */
export function verifyDelivery(
  proof: DeliveryProof,
  secret: string | null,
  rawBody: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): void {
  if (proof.signature !== undefined || secret === null) {
    verifySignature(proof.signature, secret, rawBody, nowSeconds)
    return
  }
  if (proof.grafana) {
    const { signature, timestamp } = proof.grafana
    if (timestamp !== undefined) {
      if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS)
        throw new UnauthorizedError('the signature timestamp is outside the 300-second tolerance')
    }
    const expected = timestamp === undefined ? hmac(secret, rawBody) : hmac(secret, Buffer.from(`${timestamp}:`), rawBody)
    if (!sameDigest(expected, signature.trim())) throw new UnauthorizedError('the signature does not match the body')
    return
  }
  if (proof.sharedSecret !== undefined) {
    if (!sameSecret(secret, proof.sharedSecret)) throw new UnauthorizedError('the credentials are not this webhook’s secret')
    return
  }
  throw new UnauthorizedError(
    `this webhook requires proof of its secret: send ${SIGNATURE_HEADER}, ${GRAFANA_SIGNATURE_HEADER}, or the secret as Authorization: Bearer (or the Basic password)`,
  )
}
