import { createHmac, timingSafeEqual } from 'node:crypto'

/** How long a screenshot's link works: an hour to open what a results page listed. */
export const SCREENSHOT_LINK_SECONDS = 3600

export const SCREENSHOT_PATH = '/api/v1/synthetics/screenshots'

const signatureOf = (key: Uint8Array, id: string, expires: number) =>
  createHmac('sha256', key).update(`${id}.${expires}`).digest('base64url')

/**
 * A screenshot's link: its id, when the link expires (Unix seconds), and the HMAC-SHA256 over
 * both with the screenshot's own key (decision 0016, "Browser checks").
 */
export function screenshotLink(base: string, screenshot: { id: string; linkKey: Uint8Array }, now = new Date()): string {
  const expires = Math.floor(now.getTime() / 1000) + SCREENSHOT_LINK_SECONDS
  return `${base}${SCREENSHOT_PATH}/${screenshot.id}?expires=${expires}&signature=${signatureOf(screenshot.linkKey, screenshot.id, expires)}`
}

/** Whether a link is the screenshot's and has not expired; compared in constant time. */
export function screenshotLinkHolds(linkKey: Uint8Array, id: string, expires: number, signature: string, now = new Date()): boolean {
  if (expires * 1000 <= now.getTime()) return false
  const expected = Buffer.from(signatureOf(linkKey, id, expires))
  const given = Buffer.from(signature)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
