import { lookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

// Requests to addresses users give (chat and webhook URLs, push endpoints, status page
// subscribers, synthetic checks) must not reach the service's own network: every surface that
// makes them checks targets here, when saved and again when each connection is made.

/** What an outbound request to a user's address needs to know. */
export interface OutboundPolicy {
  /** Loopback, private and link-local targets are allowed (ALLOW_PRIVATE_TARGETS: tests, on-premises). */
  allowPrivateTargets: boolean
}

/** A target refused because of where it points; the message says why, for a 400 or a failed attempt. */
export class TargetRefused extends Error {
  override name = 'TargetRefused'
}

/** A target whose host name does not resolve (now): a kind of refusal callers may choose to accept. */
export class TargetUnresolved extends TargetRefused {
  override name = 'TargetUnresolved'
}

/** Only ordinary public unicast addresses; everything ipaddr.js names otherwise (private, loopback, link-local, …) is refused. */
function isPublic(address: string): boolean {
  return ipaddr.process(address).range() === 'unicast'
}

/** Refuses (TargetRefused) an address the policy does not allow: for callers that resolve names themselves. */
export function checkAddress(address: string, policy: OutboundPolicy): void {
  if (!policy.allowPrivateTargets && !isPublic(address)) {
    throw new TargetRefused(`the target resolves to ${address}, a non-public address (set ALLOW_PRIVATE_TARGETS=true to allow it)`)
  }
}

/** Parses and checks a target URL: http(s), and every address its host resolves to is public. */
export async function checkTarget(url: string, policy: OutboundPolicy): Promise<URL> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TargetRefused('must be an absolute URL')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new TargetRefused('must be an http or https URL')
  if (parsed.username || parsed.password) throw new TargetRefused('must not carry credentials')
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve, reject) =>
        lookup(host, { all: true }, (error, found) =>
          error
            ? reject(new TargetUnresolved(`its host does not resolve: ${error.code ?? error.message}`))
            : resolve(found.map((entry) => entry.address)),
        ),
      )
  for (const address of addresses) checkAddress(address, policy)
  return parsed
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `dns.lookup` for connections (undici's `connect.lookup`, an https.Agent's `lookup`) that
 * refuses non-public addresses when the connection is made, not only when the target was saved:
 * a host that resolves to a public address at creation and to 127.0.0.1 later (DNS rebinding)
 * is refused at connect time.
 */
export function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, [])
      try {
        for (const entry of found) checkAddress(entry.address, policy)
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, [])
      }
      if (options.all) return callback(null, found)
      const [first] = found
      return callback(null, first?.address ?? '', first?.family)
    })
  }
}
