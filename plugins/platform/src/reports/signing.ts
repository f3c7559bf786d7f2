import { createHmac, timingSafeEqual } from 'node:crypto'

/** How long a download link works. */
export const DOWNLOAD_TTL_SECONDS = 15 * 60

const signatureOf = (key: string, reportId: string, expires: number) =>
  createHmac('sha256', key).update(`${reportId}.${expires}`).digest('base64url')

/** The query of a download link: when it expires (Unix seconds) and the HMAC-SHA256 over the report id and that time. */
export function signDownload(key: string, reportId: string, now = new Date()) {
  const expires = Math.floor(now.getTime() / 1000) + DOWNLOAD_TTL_SECONDS
  return { expires, signature: signatureOf(key, reportId, expires) }
}

/** Whether a link is ours and still valid; the signature is compared in constant time. */
export function verifyDownload(key: string, reportId: string, expires: number, signature: string, now = new Date()): boolean {
  if (expires * 1000 <= now.getTime()) return false
  const expected = Buffer.from(signatureOf(key, reportId, expires))
  const given = Buffer.from(signature)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
