import { expiringLinkHolds, signExpiringLink } from '@svc/http'

/** How long a download link works. */
export const DOWNLOAD_TTL_SECONDS = 15 * 60

/** The query of a download link: when it expires (Unix seconds) and the HMAC-SHA256 over the report id and that time. */
export function signDownload(key: string, reportId: string, now = new Date()) {
  return signExpiringLink(key, reportId, DOWNLOAD_TTL_SECONDS, now)
}

/** Whether a link is ours and still valid; the signature is compared in constant time. */
export function verifyDownload(key: string, reportId: string, expires: number, signature: string, now = new Date()): boolean {
  return expiringLinkHolds(key, reportId, { expires, signature }, now)
}
