import { signExpiringLink } from '@svc/http'

/** How long a screenshot's link works: an hour to open what a results page listed. */
export const SCREENSHOT_LINK_SECONDS = 3600

export const SCREENSHOT_PATH = '/api/v1/synthetics/screenshots'

/**
 * A screenshot's link, signed with the screenshot's own key (decision 0016, "Browser checks: the
 * kind"): a leaked link opens that image only, and the replicas share no configured key for it.
 */
export function screenshotLink(base: string, screenshot: { id: string; linkKey: Uint8Array }, now = new Date()): string {
  const { expires, signature } = signExpiringLink(screenshot.linkKey, screenshot.id, SCREENSHOT_LINK_SECONDS, now)
  return `${base}${SCREENSHOT_PATH}/${screenshot.id}?expires=${expires}&signature=${signature}`
}
