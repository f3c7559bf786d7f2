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
