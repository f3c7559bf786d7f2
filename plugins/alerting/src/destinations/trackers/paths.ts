/** Where a tracker's webhook sends ticket changes (public; the signature proves the sender). */
export const trackerEventsPath = (trackerId: string) => `/api/v1/trackers/${trackerId}/events`

/** A site URL without the slashes it may end with (a loop, not a pattern: linear on any input). */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length
  while (end > 0 && url[end - 1] === '/') end -= 1
  return url.slice(0, end)
}
