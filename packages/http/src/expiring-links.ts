import { createHmac, timingSafeEqual } from 'node:crypto'
import { Type } from 'typebox'

// A link that works without credentials until it expires: the query carries when it expires
// (Unix seconds) and an HMAC-SHA256 over the thing's id and that time. Report downloads sign
// with REPORTS_SIGNING_KEY; a check's screenshot with a key of its own (decision 0016).

const signatureOf = (key: string | Uint8Array, id: string, expires: number) =>
  createHmac('sha256', key).update(`${id}.${expires}`).digest('base64url')

/** The query of a link to `id` that works for `ttlSeconds` from `now`. */
export function signExpiringLink(key: string | Uint8Array, id: string, ttlSeconds: number, now = new Date()) {
  const expires = Math.floor(now.getTime() / 1000) + ttlSeconds
  return { expires, signature: signatureOf(key, id, expires) }
}

/** Whether a link to `id` was signed with `key` and has not expired; compared in constant time. */
export function expiringLinkHolds(
  key: string | Uint8Array,
  id: string,
  link: { expires: number; signature: string },
  now = new Date(),
): boolean {
  if (link.expires * 1000 <= now.getTime()) return false
  const expected = Buffer.from(signatureOf(key, id, link.expires))
  const given = Buffer.from(link.signature)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The query of a link `signExpiringLink` made: what a route serving it takes. */
export const ExpiringLinkQuery = Type.Object({
  expires: Type.Integer({ minimum: 0, description: 'Unix seconds' }),
  signature: Type.String({ minLength: 1, maxLength: 128 }),
})
